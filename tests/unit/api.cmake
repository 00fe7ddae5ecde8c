# Every public call given NULL pointers: refused with RILL_ERR_INVALID_ARG (or its "none"
# value), never a crash.
rill_add_test(NAME test_api_null SOURCES test_api_null.c LIBS rill_dsl LABELS unit)
# matrix sizes that overflow or cannot fit in memory: refused, naming the sizes
rill_add_test(NAME test_matrix_sizes SOURCES test_matrix_sizes.c LIBS rill_dsl LABELS unit)
