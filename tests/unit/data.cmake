# Data and collections under injected failures (link-time wrapping of internal calls).
rill_add_test(NAME test_data_alloc_fail SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_data_alloc_fail.c
    LIBS rill_dsl LABELS unit TIMEOUT 60)
target_link_options(test_data_alloc_fail PRIVATE -Wl,--wrap=rill_hmap_put)
# The tile distributions' maps on every grid up to 12 x 12 (no ranks needed)
rill_add_test(NAME test_matrix_dist SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_matrix_dist.c
    LIBS rill_dsl LABELS unit TIMEOUT 60)
