# hb_versioned_client(<out>): writes client/hostbridge-request.sh to <out>
# with its `version=unreleased` line set to the project's version, so the
# client `install` drops into a spool answers --version like every binary.
function(hb_versioned_client out)
  set(src ${CMAKE_SOURCE_DIR}/client/hostbridge-request.sh)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} text)
  string(FIND "${text}" "\nversion=unreleased\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${src} lost its `version=unreleased` line")
  endif()
  string(REPLACE "\nversion=unreleased\n" "\nversion=${PROJECT_VERSION}\n" text "${text}")
  file(WRITE ${out}.tmp "${text}")
  configure_file(${out}.tmp ${out} COPYONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                 GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endfunction()
