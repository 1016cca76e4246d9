# `cmake --install` puts headers, the three libraries and a CMake package in a prefix, so an
# outside project writes:
#   find_package(minigrad CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE minigrad::minigrad)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(minigrad_autograd PROPERTIES EXPORT_NAME autograd)
set_target_properties(minigrad_nn PROPERTIES EXPORT_NAME nn)
set_target_properties(minigrad_optim PROPERTIES EXPORT_NAME optim)
set_target_properties(minigrad_data PROPERTIES EXPORT_NAME data)
set_target_properties(minigrad_io PROPERTIES EXPORT_NAME io)
set_target_properties(minigrad_parity PROPERTIES EXPORT_NAME parity)
# Headers go to include/minigrad/: `#include <minigrad/minigrad.hpp>`, `<minigrad/nn/linear.hpp>`.
# include/minigrad is on the include path too, for the headers' own includes ("nn/module.hpp").
foreach(target ${minigrad_libraries} minigrad)
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/minigrad>)
endforeach()

install(TARGETS ${minigrad_libraries} minigrad EXPORT minigradTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY autograd nn optim data io parity DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigrad
        FILES_MATCHING PATTERN "*.hpp")
install(FILES minigrad.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigrad)
# The helpers of the examples and of scripts/train_template.cpp (progress line, loss curve as CSV
# and SVG), so that a copy of the template builds outside the tree.
install(DIRECTORY examples/support DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigrad/examples FILES_MATCHING PATTERN "*.hpp")

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/minigrad)
install(EXPORT minigradTargets NAMESPACE minigrad:: DESTINATION ${config_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/minigradConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/minigradConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minigradConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minigradConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/minigradConfigVersion.cmake
        DESTINATION ${config_dir})
