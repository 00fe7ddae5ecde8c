# base/sync: placing another clock's instant on the host clock (the GPU managers' time
# references).
rill_add_test(NAME test_time_bracket SOURCES test_time_bracket.c LIBS rill_base LABELS unit)
