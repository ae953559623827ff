# SPDX-License-Identifier: Apache-2.0
# `cpack -G DEB` in the build directory makes ppsim_<version>_<arch>.deb: the two programs, their
# man pages and completions, the configs under /usr/share/ppsim and the Python module where
# Debian's python3 finds it. dpkg-shlibdeps (dpkg-dev) declares the libraries it links.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ppsim)
set(CPACK_PACKAGE_VENDOR ppsim)
set(CPACK_PACKAGE_CONTACT "ppsim developers <ppsim-dev@lists.ppsim.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "discrete-event simulator of pipeline-parallel training schedules")
set(CPACK_PACKAGE_DESCRIPTION
    "ppsim replays pipeline-parallel training schedules (GPipe, 1F1B, interleaved 1F1B, zero-bubble, \
ZB-V, DualPipeV) op by op over p devices and m micro-batches, with link latency and bandwidth and a \
transformer cost model, and reports step time, bubble ratio and peak memory per device.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ppsim_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
if(pybind11_FOUND)
  # The extension module is built for this python3's ABI (cpython-3XY) and nothing else.
  math(EXPR next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${next_minor})")
endif()
# The licence, as Debian reads a package's terms, the README and the changelog (gzipped, as Debian
# policy 12.7 wants it) in /usr/share/doc/ppsim.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
find_program(PPSIM_GZIP gzip REQUIRED)
set(PPSIM_CHANGELOG_GZ ${PROJECT_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${PPSIM_CHANGELOG_GZ}
                   COMMAND ${PPSIM_GZIP} -n -9 -c ${PROJECT_SOURCE_DIR}/docs/changelog.md > ${PPSIM_CHANGELOG_GZ}
                   DEPENDS ${PROJECT_SOURCE_DIR}/docs/changelog.md
                   COMMENT "changelog.gz")
add_custom_target(ppsim_changelog ALL DEPENDS ${PPSIM_CHANGELOG_GZ})
install(FILES ${PPSIM_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
include(CPack)
