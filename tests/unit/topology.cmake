# base/topology: core choice, binding, steal orders.
rill_add_test(NAME test_topology SOURCES test_topology.c LIBS rill_base LABELS unit)
