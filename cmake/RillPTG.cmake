# rill_add_ptg(target file.rill): compile a PTG program (docs/ptg.md) with rillcc into
# target: the generated C joins the target's sources, its header (FILE.h: the globals'
# struct and FILE_taskpool_create) its include path. In Rill's tree rillcc is the target
# rillcc; in an installed Rill (find_package(Rill)) it is the imported Rill::rillcc.
function(rill_add_ptg target file)
    if(TARGET rillcc)
        set(rillcc rillcc)
    elseif(TARGET Rill::rillcc)
        set(rillcc Rill::rillcc)
    else()
        message(FATAL_ERROR "rill_add_ptg(${target} ${file}): rillcc is not available "
            "(Rill was built without flex and bison)")
    endif()
    get_filename_component(base ${file} NAME_WE)
    get_filename_component(abs ${file} ABSOLUTE)
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/ptg_${target})
    file(MAKE_DIRECTORY ${dir})
    add_custom_command(OUTPUT ${dir}/${base}.c ${dir}/${base}.h
        COMMAND ${rillcc} -o ${dir}/${base}.c -H ${dir}/${base}.h ${abs}
        DEPENDS ${rillcc} ${abs} COMMENT "rillcc ${file}" VERBATIM)
    target_sources(${target} PRIVATE ${dir}/${base}.c)
    target_include_directories(${target} PRIVATE ${dir})
endfunction()
