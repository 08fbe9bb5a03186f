# Script mode (cmake -P): install, build the consumer against the prefix, run it.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${step} failed (${result}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${GWALIGN_BUILD_DIR} --prefix ${prefix})
# The installed package holds the product only: no test oracle (*_reference) or synthetic workload
# header, and no library defining their functions (they live in gwalign_testing, never installed).
file(GLOB_RECURSE leaked_headers ${prefix}/include/*_reference.h ${prefix}/include/*/workloads.h)
if(leaked_headers)
  message(FATAL_ERROR "test-support headers were installed: ${leaked_headers}")
endif()
file(GLOB installed_libraries ${prefix}/lib*/libgwalign_*.a ${prefix}/lib*/libgwalign_*.so)
if(NOT installed_libraries)
  message(FATAL_ERROR "no gwalign library under ${prefix}/lib*")
endif()
foreach(library IN LISTS installed_libraries)
  run("nm ${library}" nm -C --defined-only ${library})
  if(last_output MATCHES "gw::[a-z_:]*_reference\\(|gw::(synthetic_yeast_graph|random_perturbations|random_diffusion_graphs)\\(")
    message(FATAL_ERROR "${library} defines a test oracle or workload generator:\n"
                        "${CMAKE_MATCH_0}")
  endif()
endforeach()

run("consumer configure" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run("consumer build" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run("consumer run" ${WORK_DIR}/consumer/gwalign_consumer)
if(NOT last_output MATCHES "connected components: 1")
  message(FATAL_ERROR "consumer printed unexpected output:\n${last_output}")
endif()
message(STATUS "consumer output:\n${last_output}")
