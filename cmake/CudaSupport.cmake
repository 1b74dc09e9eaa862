# Decides whether the CUDA backends are built (FLASHVISION_CUDA = AUTO | ON | OFF).
include(CheckLanguage)

set(FLASHVISION_WITH_CUDA OFF)
if(FLASHVISION_CUDA STREQUAL "ON")
  enable_language(CUDA)
  set(FLASHVISION_WITH_CUDA ON)
elseif(FLASHVISION_CUDA STREQUAL "AUTO")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(FLASHVISION_WITH_CUDA ON)
  else()
    message(STATUS "flashvision: nvcc not found, building without the CUDA backends")
  endif()
elseif(NOT FLASHVISION_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "FLASHVISION_CUDA must be AUTO, ON or OFF (got '${FLASHVISION_CUDA}')")
endif()

if(FLASHVISION_WITH_CUDA)
  find_package(CUDAToolkit REQUIRED)
  # CMake < 3.26 does not know nvcc's C++20 flag; the library's cxx_std_20 also applies to its .cu
  # files, so tell CMake the flag (nvcc >= 12 accepts it).
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endif()
message(STATUS "flashvision: CUDA backends ${FLASHVISION_WITH_CUDA}")
