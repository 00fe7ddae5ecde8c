# tools/rill_trace_merge, rill_trace_plot and rill_trace_timeline on the small 2-rank traces in
# trace_data/ (Python 3; the plot tests only where some python3 imports matplotlib).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import json"
        RESULT_VARIABLE rill_py_json OUTPUT_QUIET ERROR_QUIET)
endif()
if(Python3_FOUND AND rill_py_json EQUAL 0)
    set(rill_trace_tools ${CMAKE_SOURCE_DIR}/tools)
    set(rill_trace_data ${CMAKE_CURRENT_LIST_DIR}/trace_data)
    set(rill_trace_check ${rill_trace_data}/check_trace_tools.py)
    set(rill_trace_out ${CMAKE_CURRENT_BINARY_DIR}/trace_tools)
    set(rill_expect_fail sh ${CMAKE_SOURCE_DIR}/tests/expect_fail.sh 30)
    set(rill_merge ${Python3_EXECUTABLE} ${rill_trace_tools}/rill_trace_merge
        -o ${rill_trace_out}/bad.json)
    add_test(NAME trace_tools_merge COMMAND ${Python3_EXECUTABLE} ${rill_trace_check} merge
        ${rill_trace_tools} ${rill_trace_out})
    add_test(NAME trace_tools_merge_dup_rank COMMAND ${rill_expect_fail}
        "error: .*run\\.0\\.json and .*dup_rank\\.json both claim rank 0"
        ${rill_merge} ${rill_trace_data}/run.0.json ${rill_trace_data}/dup_rank.json)
    add_test(NAME trace_tools_merge_bad_json COMMAND ${rill_expect_fail}
        "error: .*truncated\\.json: invalid JSON: .*line [0-9]+ column [0-9]+"
        ${rill_merge} ${rill_trace_data}/run.0.json ${rill_trace_data}/truncated.json)
    add_test(NAME trace_tools_merge_missing COMMAND ${rill_expect_fail}
        "error: .*no_such\\.json: no such file"
        ${rill_merge} ${rill_trace_data}/run.0.json ${rill_trace_data}/no_such.json)
    add_test(NAME trace_tools_merge_no_input COMMAND ${rill_expect_fail} "error: no input files"
        ${rill_merge})
    add_test(NAME trace_tools_merge_no_prefix_match COMMAND ${rill_expect_fail}
        "error: no file matches .*/nothing\\.<rank>\\.json"
        ${rill_merge} --prefix ${rill_trace_data}/nothing)
    # The plot checks its inputs before it needs matplotlib.
    add_test(NAME trace_tools_plot_bad_json COMMAND ${rill_expect_fail}
        "error: .*truncated\\.json: invalid JSON"
        ${Python3_EXECUTABLE} ${rill_trace_tools}/rill_trace_plot -o ${rill_trace_out}/bad.png
        ${rill_trace_data}/truncated.json)
    add_test(NAME trace_tools_timeline COMMAND ${Python3_EXECUTABLE} ${rill_trace_check} timeline
        ${rill_trace_tools} ${rill_trace_out})
    set(rill_timeline ${Python3_EXECUTABLE} ${rill_trace_tools}/rill_trace_timeline
        ${rill_trace_data}/run.0.json ${rill_trace_data}/run.1.json)
    # a window in which no event starts is no error: it says so, what runs through it and
    # the next event (the README's --start 1000 --end 1100 fell in the main job's start-up)
    add_test(NAME trace_tools_timeline_empty_window COMMAND env
        "ALSO=running through it: 20.000 -> 430.500  rank 0  worker 0 \\(main thread\\)  potrf"
        sh ${CMAKE_SOURCE_DIR}/tests/apps/expect_exit.sh 30 0
        "^no event starts between 100.000 and 101.000 us \\(events start from 0.000 to 1915.000 us\\)$"
        ${rill_timeline} --start 100 --end 101)
    set_tests_properties(trace_tools_timeline_empty_window PROPERTIES LABELS "unit;trace;script")
    add_test(NAME trace_tools_timeline_no_name COMMAND ${rill_expect_fail}
        "error: no slice named 'nosuch' in the input" ${rill_timeline} --name nosuch)
    add_test(NAME trace_tools_timeline_nth COMMAND ${rill_expect_fail}
        "error: --nth 9: there are 4 slices named 'trsm' \\(0..3, or -4..-1\\)"
        ${rill_timeline} --name trsm --nth 9)
    add_test(NAME trace_tools_timeline_critical_no_tiles COMMAND ${rill_expect_fail}
        "error: no slice names its tiles" ${rill_timeline} --critical)
    add_test(NAME trace_tools_timeline_critical_stats COMMAND ${rill_expect_fail}
        "error: give --critical alone, not with --stats" ${rill_timeline} --critical --stats)
    add_test(NAME trace_tools_timeline_buckets_alone COMMAND ${rill_expect_fail}
        "error: --buckets goes with --stats" ${rill_timeline} --buckets 100)
    add_test(NAME trace_tools_timeline_buckets_zero COMMAND ${rill_expect_fail}
        "error: --buckets 0: the bucket must be > 0 us" ${rill_timeline} --stats --buckets 0)
    add_test(NAME trace_tools_timeline_gap_no_name COMMAND ${rill_expect_fail}
        "error: no event named 'nosuch' in the input" ${rill_timeline} --gap recv nosuch)
    add_test(NAME trace_tools_timeline_gap_stats COMMAND ${rill_expect_fail}
        "error: give --gap alone" ${rill_timeline} --gap recv send --stats)
    add_test(NAME trace_tools_timeline_landings_none COMMAND ${rill_expect_fail}
        "error: no landing from another rank's GPU joined to its put" ${rill_timeline}
        --landings)
    add_test(NAME trace_tools_timeline_landings_gap COMMAND ${rill_expect_fail}
        "error: give --landings alone" ${rill_timeline} --landings --gap recv send)
    add_test(NAME trace_tools_timeline_launches_none COMMAND ${rill_expect_fail}
        "error: no GPU manager's launch starts in the window" ${rill_timeline} --launches)
    add_test(NAME trace_tools_timeline_launches_landings COMMAND ${rill_expect_fail}
        "error: give --launches alone" ${rill_timeline} --launches --landings)
    add_test(NAME trace_tools_timeline_waits_none COMMAND ${rill_expect_fail}
        "error: no GPU task's launch pairs with its kernel" ${rill_timeline} --waits)
    add_test(NAME trace_tools_timeline_waits_launches COMMAND ${rill_expect_fail}
        "error: give --waits alone" ${rill_timeline} --waits --launches)
    add_test(NAME trace_tools_timeline_bad_json COMMAND ${rill_expect_fail}
        "error: .*truncated\\.json: invalid JSON" ${Python3_EXECUTABLE}
        ${rill_trace_tools}/rill_trace_timeline ${rill_trace_data}/truncated.json)
    set_tests_properties(trace_tools_merge trace_tools_merge_dup_rank trace_tools_merge_bad_json
        trace_tools_merge_missing trace_tools_merge_no_input trace_tools_merge_no_prefix_match
        trace_tools_plot_bad_json trace_tools_timeline trace_tools_timeline_no_name
        trace_tools_timeline_nth trace_tools_timeline_bad_json
        trace_tools_timeline_critical_no_tiles trace_tools_timeline_critical_stats
        trace_tools_timeline_buckets_alone trace_tools_timeline_buckets_zero
        trace_tools_timeline_gap_no_name trace_tools_timeline_gap_stats
        trace_tools_timeline_landings_none trace_tools_timeline_landings_gap
        trace_tools_timeline_launches_none trace_tools_timeline_launches_landings
        trace_tools_timeline_waits_none trace_tools_timeline_waits_launches
        PROPERTIES LABELS "unit;script" TIMEOUT 60)

    # The first python3 that imports matplotlib: CMake's (a pyenv or venv one, maybe), or
    # the system's (python3-matplotlib).
    set(rill_py_mpl "")
    foreach(py ${Python3_EXECUTABLE} /usr/bin/python3)
        if(NOT rill_py_mpl AND EXISTS ${py})
            execute_process(COMMAND ${py} -c "import matplotlib"
                RESULT_VARIABLE rill_mpl_rc OUTPUT_QUIET ERROR_QUIET)
            if(rill_mpl_rc EQUAL 0)
                set(rill_py_mpl ${py})
            endif()
        endif()
    endforeach()
    if(rill_py_mpl)
        add_test(NAME trace_tools_plot COMMAND ${rill_py_mpl} ${rill_trace_check} plot
            ${rill_trace_tools} ${rill_trace_out})
        set_tests_properties(trace_tools_plot PROPERTIES LABELS "unit;script" TIMEOUT 120)
    else()
        message(STATUS "trace_tools_plot test skipped: no python3 here imports matplotlib")
    endif()
endif()

# tools/rill_bench report and tools/rill_trace_plot under a python3 without matplotlib (a
# venv made from /usr/bin/python3): each runs again under /usr/bin/python3 (skipped where
# that one lacks matplotlib too)
add_test(NAME python_matplotlib_fallback
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/python_fallback.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(python_matplotlib_fallback PROPERTIES LABELS "unit;trace;script" TIMEOUT 120
    SKIP_RETURN_CODE 77)
