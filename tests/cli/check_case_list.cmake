# The C++ tool and `python -m flashvision.bench` must run the same cases: compares
# `flashvision bench --list` with what print_python_cases.py prints from the Python module
# (CASES_PY), line by line (name, BxHxNqxNkxD, what) after collapsing runs of spaces.
execute_process(COMMAND ${CLI} bench --list RESULT_VARIABLE rc OUTPUT_VARIABLE cli_out
  ERROR_VARIABLE cli_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flashvision bench --list: exit code ${rc}\n${cli_out}${cli_err}")
endif()
execute_process(COMMAND ${PYTHON} ${PRINTER} ${CASES_PY} RESULT_VARIABLE rc
  OUTPUT_VARIABLE py_out ERROR_VARIABLE py_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PRINTER} ${CASES_PY}: exit code ${rc}\n${py_out}${py_err}")
endif()

# --list starts with a header line ("case BxHxNqxNkxD what"). (Not REGEX REPLACE "^...": CMake
# would apply the anchored pattern again after each match and drop every line.)
string(FIND "${cli_out}" "\n" header_end)
math(EXPR header_end "${header_end} + 1")
string(SUBSTRING "${cli_out}" ${header_end} -1 cli_out)
foreach(text cli_out py_out)
  string(REGEX REPLACE " +" " " ${text} "${${text}}")
  string(REGEX REPLACE " *\n" "\n" ${text} "${${text}}")
  string(STRIP "${${text}}" ${text})
endforeach()
if(cli_out STREQUAL "")
  message(FATAL_ERROR "flashvision bench --list printed no cases")
endif()
if(NOT cli_out STREQUAL py_out)
  message(FATAL_ERROR "the case tables differ\nflashvision bench --list:\n${cli_out}\n"
                      "python -m flashvision.bench:\n${py_out}")
endif()
