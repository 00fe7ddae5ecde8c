# device/zone: the allocator that carves a GPU's memory zone (pure host code).
rill_add_test(NAME test_zone SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_zone.c LIBS rill_device
    LABELS unit TIMEOUT 120)
