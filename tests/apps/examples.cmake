# The examples run as tests: each checks its own result.
add_test(NAME example_dtd_axpy COMMAND dtd_axpy)
set_tests_properties(example_dtd_axpy PROPERTIES LABELS "apps" TIMEOUT 60)
