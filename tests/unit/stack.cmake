# base/stack: another thread's call stack, as the watchdog prints a stuck GPU manager's.
# ENABLE_EXPORTS: the test's own functions are named in the frames (as a shared library's
# exported ones are).
rill_add_test(NAME test_thread_stack SOURCES test_thread_stack.c LIBS rill_base LABELS unit
    TIMEOUT 60)
set_target_properties(test_thread_stack PROPERTIES ENABLE_EXPORTS ON)
