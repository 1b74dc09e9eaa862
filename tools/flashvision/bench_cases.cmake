# Compiles the benchmark case table (python/flashvision/bench/cases.txt, shared with
# `python -m flashvision.bench`) into a header, so that the installed tool needs no data file.

# flashvision_generate_case_table(TABLE HEADER): writes HEADER, a kCaseRows array with one row per
# case of TABLE, and re-runs the configure step whenever TABLE changes.
function(flashvision_generate_case_table table header)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${table})
  # The "what" field ends the line; quotes, backslashes and semicolons would break the C++ string
  # or CMake's list, so the pattern refuses them.
  set(number "([1-9][0-9]*)")
  set(row_pattern "^([a-z0-9-]+) +${number} +${number} +${number} +${number} +${number} +(fwd|fwd\\+bwd) +([^\"\\\\;]+)$")
  file(STRINGS ${table} lines)
  set(rows "")
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "${row_pattern}")
      message(FATAL_ERROR "${table}:${line_number}: expected 'name B H Nq Nk D fwd|fwd+bwd what' "
                          "(positive integers; what without quotes, backslashes or semicolons), "
                          "got '${line}'")
    endif()
    set(forward_only false)
    if(CMAKE_MATCH_7 STREQUAL "fwd")
      set(forward_only true)
    endif()
    string(APPEND rows "    {\"${CMAKE_MATCH_1}\", {${CMAKE_MATCH_2}, ${CMAKE_MATCH_3}, "
                       "${CMAKE_MATCH_4}, ${CMAKE_MATCH_5}, ${CMAKE_MATCH_6}}, ${forward_only}, "
                       "\"${CMAKE_MATCH_8}\"},\n")
  endforeach()
  if(rows STREQUAL "")
    message(FATAL_ERROR "${table}: no cases")
  endif()
  # file(CONFIGURE) rewrites the header only when its text changes, so nothing rebuilds needlessly.
  file(CONFIGURE OUTPUT ${header} @ONLY CONTENT [=[
// Generated from @table@ by tools/flashvision/bench_cases.cmake at configure time; edit the table.
#pragma once

#include <cstdint>

namespace flashvision::tool::generated {

/// One line of the case table.
struct CaseRow {
  const char* name;
  int64_t shape[5];  // B, H, Nq, Nk, D
  bool forward_only;
  const char* what;
};

inline constexpr CaseRow kCaseRows[] = {
@rows@};

}  // namespace flashvision::tool::generated
]=])
endfunction()
