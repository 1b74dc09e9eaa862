# Runs the flashvision tool with ARGS ("|"-separated) in WORK_DIR; checks exit code and output.
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CLI} ${args} WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "flashvision ${args}: exit code ${rc}, expected ${EXPECT_RC}\n${all}")
endif()
if(NOT all MATCHES "${EXPECT_MATCH}")
  message(FATAL_ERROR "flashvision ${args}: output does not match '${EXPECT_MATCH}'\n${all}")
endif()
