# tools/rill_bench report: bench/results/README.md is what the CSV files next to it give (CI
# fails when a CSV file changed and the README was not regenerated), and a malformed results
# file is refused with its file, line and column. Neither needs matplotlib.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
    add_test(NAME bench_results_current
        COMMAND ${Python3_EXECUTABLE} tools/rill_bench report --check
        WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    add_test(NAME bench_report_bad_csv COMMAND ${CMAKE_COMMAND} -DPYTHON=${Python3_EXECUTABLE}
        -DSOURCE=${CMAKE_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/bench_report_bad_csv
        -P ${CMAKE_CURRENT_LIST_DIR}/bench_report/bad_csv.cmake)
    set_tests_properties(bench_results_current bench_report_bad_csv PROPERTIES
        LABELS "unit;bench;script" TIMEOUT 60)
endif()
