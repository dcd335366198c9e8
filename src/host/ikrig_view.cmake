# Included by src/host/CMakeLists.txt once the ikrig target exists: builds `ikrig view`
# into it. civetweb and cJSON come from Debian's packages (libcivetweb-dev, libcjson-dev);
# when they are missing, scripts/ensure-packages installs them (IKRIG_VIEW_INSTALL=ON).
option(IKRIG_VIEW_INSTALL "Install libcivetweb-dev and libcjson-dev with scripts/ensure-packages when missing" ON)
# Not find_package(civetweb): Debian 12's civetweb-config.cmake names a file the package
# does not ship, so the library and header are found by hand.
macro(ikrig_view_find)
  find_path(IKRIG_CIVETWEB_INCLUDE civetweb.h)
  find_library(IKRIG_CIVETWEB_LIB civetweb)
  find_path(IKRIG_CJSON_INCLUDE cJSON.h PATH_SUFFIXES cjson)
  find_library(IKRIG_CJSON_LIB cjson)
endmacro()
ikrig_view_find()
if((NOT IKRIG_CIVETWEB_INCLUDE OR NOT IKRIG_CIVETWEB_LIB OR NOT IKRIG_CJSON_INCLUDE OR NOT IKRIG_CJSON_LIB)
   AND IKRIG_VIEW_INSTALL)
  message(STATUS "ikrig view: installing libcivetweb-dev libcjson-dev")
  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/ensure-packages libcivetweb-dev libcjson-dev)
  unset(IKRIG_CIVETWEB_INCLUDE CACHE)
  unset(IKRIG_CIVETWEB_LIB CACHE)
  unset(IKRIG_CJSON_INCLUDE CACHE)
  unset(IKRIG_CJSON_LIB CACHE)
  ikrig_view_find()
endif()
if(NOT IKRIG_CIVETWEB_INCLUDE OR NOT IKRIG_CIVETWEB_LIB OR NOT IKRIG_CJSON_INCLUDE OR NOT IKRIG_CJSON_LIB)
  message(FATAL_ERROR "ikrig view needs civetweb and cJSON (Debian: libcivetweb-dev libcjson-dev)")
endif()
find_package(Threads REQUIRED)
target_sources(ikrig PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ikrig_view.c)
target_link_libraries(ikrig PRIVATE ${IKRIG_CIVETWEB_LIB} ${IKRIG_CJSON_LIB} Threads::Threads)
target_include_directories(ikrig SYSTEM PRIVATE ${IKRIG_CIVETWEB_INCLUDE} ${IKRIG_CJSON_INCLUDE})
target_compile_definitions(ikrig PRIVATE IKRIG_VIEW_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/view")

# three.js for the page: npm ci in the source tree's view/ (node_modules is ignored by
# git), again whenever the lockfile changes.
find_program(IKRIG_NPM npm)
if(IKRIG_NPM)
  set(ikrig_view_stamp ${CMAKE_CURRENT_SOURCE_DIR}/view/node_modules/.package-lock.json)
  add_custom_command(OUTPUT ${ikrig_view_stamp}
                     COMMAND ${IKRIG_NPM} ci --no-audit --no-fund --loglevel=error
                     WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/view
                     DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/view/package-lock.json
                     COMMENT "ikrig view: npm ci (three.js)")
  add_custom_target(ikrig_view_page DEPENDS ${ikrig_view_stamp})
  add_dependencies(ikrig ikrig_view_page)
else()
  message(WARNING "npm not found: 'ikrig view' serves its page without three.js until 'npm ci' runs in "
                  "${CMAKE_CURRENT_SOURCE_DIR}/view")
endif()
