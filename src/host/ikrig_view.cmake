# Included by src/host/CMakeLists.txt once the ikrig target exists (IK_VIEW): builds
# `ikrig view` into it. civetweb and cJSON come from Debian's packages (libcivetweb-dev,
# libcjson-dev: scripts/test, scripts/demo and scripts/env install them; CMake only finds).
# Not find_package(civetweb): Debian 12's civetweb-config.cmake names a file the package
# does not ship, so the library and header are found by hand.
find_path(IKRIG_CIVETWEB_INCLUDE civetweb.h)
find_library(IKRIG_CIVETWEB_LIB civetweb)
find_path(IKRIG_CJSON_INCLUDE cJSON.h PATH_SUFFIXES cjson)
find_library(IKRIG_CJSON_LIB cjson)
if(NOT IKRIG_CIVETWEB_INCLUDE OR NOT IKRIG_CIVETWEB_LIB OR NOT IKRIG_CJSON_INCLUDE OR NOT IKRIG_CJSON_LIB)
  message(FATAL_ERROR "ikrig view needs civetweb and cJSON (Debian: libcivetweb-dev libcjson-dev; "
                      "scripts/ensure-packages installs them), or configure with -DIK_VIEW=OFF")
endif()
find_package(Threads REQUIRED)
target_sources(ikrig PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/ikrig_view.c)
target_link_libraries(ikrig PRIVATE ${IKRIG_CIVETWEB_LIB} ${IKRIG_CJSON_LIB} Threads::Threads)
target_include_directories(ikrig SYSTEM PRIVATE ${IKRIG_CIVETWEB_INCLUDE} ${IKRIG_CJSON_INCLUDE})
# The page from the source tree, three.js from the build tree's npm ci (the build tree
# only: ikrig_paths.h); installed, both from <prefix>/share/ikrig/view.
set(ikrig_view_build ${CMAKE_CURRENT_BINARY_DIR}/view)
file(RELATIVE_PATH ikrig_view_rel /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_DATADIR}/ikrig/view)
target_compile_definitions(ikrig PRIVATE IKRIG_VIEW_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/view"
                                         IKRIG_VIEW_THREE_DIR="${ikrig_view_build}/node_modules/three"
                                         IKRIG_INSTALL_VIEW_REL="${ikrig_view_rel}")

# three.js for the page: npm ci in the build tree's view/ (a copy of the lockfile), again
# whenever the lockfile changes.
find_program(IKRIG_NPM npm)
set(ikrig_view_stamp ${ikrig_view_build}/node_modules/.package-lock.json)
if(IKRIG_NPM)
  add_custom_command(OUTPUT ${ikrig_view_stamp}
                     COMMAND ${CMAKE_COMMAND} -E make_directory ${ikrig_view_build}
                     COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/view/package.json
                             ${CMAKE_CURRENT_SOURCE_DIR}/view/package-lock.json ${ikrig_view_build}
                     COMMAND ${CMAKE_COMMAND} -E chdir ${ikrig_view_build} ${IKRIG_NPM} ci --no-audit --no-fund
                             --loglevel=error
                     DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/view/package-lock.json
                     COMMENT "ikrig view: npm ci (three.js) in the build tree")
  add_custom_target(ikrig_view_page DEPENDS ${ikrig_view_stamp})
  add_dependencies(ikrig ikrig_view_page)
else()
  message(WARNING "npm not found (Debian: npm): 'ikrig view' serves its page without three.js")
endif()
# Installed: the page, the demo's skinned humanoid and the parts of three.js and
# three-vrm it loads (index.html's import map).
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/view/index.html ${CMAKE_CURRENT_SOURCE_DIR}/view/main.js
              ${CMAKE_CURRENT_SOURCE_DIR}/view/humanoid.glb
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ikrig/view)
set(ikrig_three_dest ${CMAKE_INSTALL_DATADIR}/ikrig/view/node_modules/three)
install(FILES ${ikrig_view_build}/node_modules/three/LICENSE DESTINATION ${ikrig_three_dest} OPTIONAL)
install(FILES ${ikrig_view_build}/node_modules/three/build/three.module.js DESTINATION ${ikrig_three_dest}/build
        OPTIONAL)
install(FILES ${ikrig_view_build}/node_modules/three/examples/jsm/controls/OrbitControls.js
        DESTINATION ${ikrig_three_dest}/examples/jsm/controls OPTIONAL)
install(FILES ${ikrig_view_build}/node_modules/three/examples/jsm/loaders/GLTFLoader.js
        DESTINATION ${ikrig_three_dest}/examples/jsm/loaders OPTIONAL)
install(FILES ${ikrig_view_build}/node_modules/three/examples/jsm/utils/BufferGeometryUtils.js
        DESTINATION ${ikrig_three_dest}/examples/jsm/utils OPTIONAL)
set(ikrig_vrm_dest ${CMAKE_INSTALL_DATADIR}/ikrig/view/node_modules/@pixiv/three-vrm)
install(FILES ${ikrig_view_build}/node_modules/@pixiv/three-vrm/LICENSE DESTINATION ${ikrig_vrm_dest} OPTIONAL)
install(FILES ${ikrig_view_build}/node_modules/@pixiv/three-vrm/lib/three-vrm.module.js
        DESTINATION ${ikrig_vrm_dest}/lib OPTIONAL)
