# Install layout: bin/flashvision, include/flashvision/, lib/, lib/cmake/flashvision/.
include(CMakePackageConfigHelpers)

install(TARGETS flashvision EXPORT flashvisionTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/flashvision DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(FLASHVISION_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flashvision)
install(EXPORT flashvisionTargets NAMESPACE flashvision:: DESTINATION ${FLASHVISION_CMAKE_DIR})
configure_package_config_file(cmake/flashvisionConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/flashvisionConfig.cmake INSTALL_DESTINATION ${FLASHVISION_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/flashvisionConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/flashvisionConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/flashvisionConfigVersion.cmake DESTINATION ${FLASHVISION_CMAKE_DIR})
