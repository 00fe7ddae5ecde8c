# bench_report_bad_csv: tools/rill_bench report refuses a malformed results file (exit 2)
# with the file, the line and the column named, and writes nothing. Each case is a results
# folder of its own under WORK holding one bad file, bad.csv (so its suite column says "bad").
# usage: cmake -DPYTHON=python3 -DSOURCE=<source dir> -DWORK=<scratch dir> -P bad_csv.cmake
set(header "date,commit,gpu,gpus,cpu,suite,config,size,figure,unit,better,best,median,runs,reference,ref_best")
# a row's columns commit to unit (the date, then these, then better to ref_best)
set(after_date "63a2d54,,0,\"AMD EPYC, 2 cores\",bad,rill x,4 KiB,us per hop,us")
set(row "2026-11-28 12:58,${after_date}")

function(expect_refused name content regex)
    set(dir ${WORK}/${name})
    file(REMOVE_RECURSE ${dir})
    file(WRITE ${dir}/bad.csv "${content}")
    execute_process(COMMAND ${PYTHON} ${SOURCE}/tools/rill_bench report --results ${dir}
        --no-figures RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    message(STATUS "${name}: exit code ${rc}: ${out}")
    if(NOT rc EQUAL 2)
        message(FATAL_ERROR "${name}: exit code ${rc}, 2 expected")
    endif()
    if(NOT out MATCHES "${regex}")
        message(FATAL_ERROR "${name}: the output does not match /${regex}/")
    endif()
    if(EXISTS ${dir}/README.md)
        message(FATAL_ERROR "${name}: README.md written from a bad file")
    endif()
endfunction()

expect_refused(header
    "date,commit,gpus,gpu,cpu,suite,config,size,figure,unit,better,best,median,runs,reference,ref_best\n"
    "error: [^\n]*/bad\\.csv, line 1, column 3: 'gpu' expected, 'gpus' found")
expect_refused(better "${header}\n${row},lower,5.2,5.3,2,,\n${row},hgher,5.2,5.3,2,,\n"
    "error: [^\n]*/bad\\.csv, line 3, column 'better': 'hgher' is not 'higher' or 'lower'")
expect_refused(best "${header}\n${row},lower,fast,5.3,2,,\n"
    "error: [^\n]*/bad\\.csv, line 2, column 'best': 'fast' is not a number")
expect_refused(fields "${header}\n${row},lower,5.2,5.3,2\n"
    "error: [^\n]*/bad\\.csv, line 2: 14 fields, 16 expected")
expect_refused(date "${header}\n2026-11-28T12:58,${after_date},lower,5.2,5.3,2,,\n"
    "error: [^\n]*/bad\\.csv, line 2, column 'date': '2026-11-28T12:58' is not a date")
