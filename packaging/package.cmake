# Included last by the top-level CMakeLists.txt, once every target exists:
# what `cmake --install` puts where (GNU layout under the prefix), and the
# Debian package CPack builds from exactly that (`cpack -G DEB` in build/).
#
#   bin/hostbridge                     the admin tool (units, client embedded)
#   lib/hostbridge/hostbridge-executor the executor, parser and snapshot copy
#   lib/hostbridge/hostbridge-parser   `install` copies into each project
#   lib/hostbridge/hostbridge-snapshot (admin/install/versions.cpp)
#   lib/hostbridge/hostbridge-engine-relay  (engines/relay/: the engine user's relay)
#   lib/hostbridge/hostbridge-pin      (engines/podman/pin_main.cpp: the pin steps' binary)
#   lib/hostbridge/hostbridge-agent    static; install drops it into each spool
#                                      (client/agent/CMakeLists.txt installs it)
#   share/man/man{1,5,8}/*.gz          the man pages (man/)
#   share/doc/hostbridge/              README, SECURITY, docs/, copyright
install(TARGETS hostbridge-executor hostbridge-parser hostbridge-engine-relay hostbridge-snapshot
        hostbridge-pin
        RUNTIME DESTINATION ${HB_INSTALL_LIBEXECDIR})
# hostbridge-agent is static on purpose (docs/MCP.md): it runs in containers
# with no libc.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/lintian-overrides
        DESTINATION share/lintian/overrides RENAME hostbridge)

# The man pages, with the version in their header (man/ -> build/man/).
set(HB_MAN_PAGES hostbridge.1 hostbridge-request.1 hostbridge-agent.1 hostbridge.json.5
                 hostbridge-policy.conf.5 hostbridge-executor.8)
set(VERSION ${PROJECT_VERSION})
foreach(page IN LISTS HB_MAN_PAGES)
  configure_file(${CMAKE_SOURCE_DIR}/man/${page} ${CMAKE_BINARY_DIR}/man/${page} @ONLY)
endforeach()
# Man pages gzipped -9n (no name, no time: reproducible), as Debian wants.
foreach(page IN LISTS HB_MAN_PAGES)
  string(REGEX MATCH "[0-9]$" section ${page})
  set(out ${CMAKE_BINARY_DIR}/man/gz/${page}.gz)
  add_custom_command(OUTPUT ${out}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/gz
                     COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/man/${page} > ${out}
                     DEPENDS ${CMAKE_BINARY_DIR}/man/${page} VERBATIM)
  list(APPEND HB_MAN_GZ ${out})
  install(FILES ${out} DESTINATION share/man/man${section})
endforeach()

set(HB_DEB_MAINTAINER "hostbridge authors <hostbridge@users.noreply.github.com>"
    CACHE STRING "Maintainer: of the Debian package")
set(HB_DOC_DIR share/doc/hostbridge)
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in
               ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
set(HB_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${HB_CHANGELOG_GZ}
                   COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/packaging/changelog > ${HB_CHANGELOG_GZ}
                   DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog VERBATIM)
# Part of `all`, so cpack (which builds `all` first) finds them.
add_custom_target(hb_package_files ALL DEPENDS ${HB_MAN_GZ} ${HB_CHANGELOG_GZ})
install(FILES ${HB_CHANGELOG_GZ} ${CMAKE_CURRENT_LIST_DIR}/debian/copyright
              ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/SECURITY.md
        DESTINATION ${HB_DOC_DIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${HB_DOC_DIR}/docs
        FILES_MATCHING PATTERN "*.md")

# --- the Debian package ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hostbridge)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HB_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${HB_DEB_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "privilege-separated bridge from a sandboxed coding agent to its host")
# The synopsis is the summary; CPack indents these lines and turns the
# empty one into " ." (Debian's paragraph break).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "A coding agent in a sandboxed container drops JSON requests into a spool
inside the bind-mounted project checkout. A systemd --user path unit wakes
a oneshot drain; a seccomp-locked parser validates each request, and a
minimal executor applies a policy, a rate limit and an integrity gate over
the trusted project files, runs one command from a fixed argv table
(compose or the project's own stack script), audits it and answers.

Builds and container starts run unattended only where the engine runs as
a user of its own: sudo hostbridge engine setup makes one, so that an
escape through the builder or the runtime reaches that user's files, not
yours. Without it, up and rebuild wait for a person (hostbridge pending,
hostbridge allow) whatever the policy says.

This package holds the admin tool hostbridge (install, doctor, approve,
audit, list, upgrade, uninstall), the executor and the parser it copies
into each project, hostbridge-agent (the agent's static client and MCP
server) it drops into each project's spool, and their manual pages.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # hostbridge_<version>_<arch>.deb
# Depends: from the binaries' own NEEDED libraries (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The bridge drives podman-compose or a stack script. buildah shows base
# images' ONBUILD triggers, without which every podman rebuild is refused
# (docs/BUILDS.md); docker compose runs nothing yet (docs/COMPOSE.md).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "podman, buildah, podman-compose, git")
# acl: `hostbridge engine setup` grants the person the engine user's socket
# with setfacl (docs/ENGINE-USER.md).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "systemd, acl")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/postinst
                                      ${CMAKE_CURRENT_LIST_DIR}/debian/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
