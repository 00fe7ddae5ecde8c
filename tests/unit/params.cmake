# base/params: value parsing and messages, sources and their precedence.
rill_add_test(NAME test_params_types SOURCES test_params_types.c LIBS rill_base LABELS unit)
rill_add_test(NAME test_params_sources SOURCES test_params_sources.c LIBS rill_base LABELS unit)
