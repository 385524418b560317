# The official PJRT C API headers (with the XLA FFI C API and the profiler plugin API), fetched at configure time from a pinned PyPI sdist and
# verified by SHA-256 (tools/build/fetch_pjrt_header.py). Exposed as the interface target
# stablert_pjrt_headers; only capi/, host/ and their tests link it.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(STABLERT_PJRT_INCLUDE_DIR "${CMAKE_BINARY_DIR}/third_party/pjrt/include")
set(STABLERT_PJRT_CACHE_DIR "${CMAKE_SOURCE_DIR}/third_party_cache" CACHE PATH
    "Where the pinned PJRT header sdist is cached")
if(NOT EXISTS "${STABLERT_PJRT_INCLUDE_DIR}/xla/pjrt/c/pjrt_c_api.h" OR
   NOT EXISTS "${STABLERT_PJRT_INCLUDE_DIR}/xla/ffi/api/c_api.h" OR
   NOT EXISTS "${STABLERT_PJRT_INCLUDE_DIR}/xla/backends/profiler/plugin/profiler_c_api.h")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${CMAKE_SOURCE_DIR}/tools/build/fetch_pjrt_header.py"
            "${STABLERT_PJRT_INCLUDE_DIR}" "${STABLERT_PJRT_CACHE_DIR}"
    RESULT_VARIABLE fetch_result)
  if(NOT fetch_result EQUAL 0)
    message(FATAL_ERROR "Fetching the PJRT C API header failed (see above)")
  endif()
endif()
add_library(stablert_pjrt_headers INTERFACE)
target_include_directories(stablert_pjrt_headers SYSTEM INTERFACE "${STABLERT_PJRT_INCLUDE_DIR}")
