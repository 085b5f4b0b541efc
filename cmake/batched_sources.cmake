# Batched translation units: a target's C++ files compiled a few at a time, each batch one generated file
# that includes them. Every file of a batch shares one parse of the headers they all include (libtorch's,
# nlohmann-json's, fmt's, GoogleTest's) and one instantiation of the templates they all use, which is
# most of what a file of this project costs to compile.
#
# CMake's own UNITY_BUILD writes each file's absolute path into the generated file, so a clone in another
# folder would miss the compiler cache on every batch. Here a batch names its files relative to the
# source root (on the include path, which ccache's base folder makes relative too): the same commit makes
# the same batches in every clone.
#
# How many files a batch takes is a target's trade of CPU against an edit's rebuild. Measured on a 2-core
# AMD EPYC (two batches compiled apart, then as one): torch_tests 66.5 s -> 41.2 s, cli_tests 45.2 s ->
# 31.4 s, the probes 13.2 s -> 10.0 s, the torch side 40.0 s -> 35.1 s, the core 57 s -> 48 s. The
# core stays at 10 a batch (the least to gain, and the most often edited).
#
# A file whose own properties (definitions, include folders, no precompiled header) differ from its
# target's stays a translation unit of its own, as does one marked SKIP_UNITY_BUILD_INCLUSION.
#
# The files of a batch share one anonymous namespace: two that define the same file-local name fail to
# compile ("redefinition of ... {anonymous}::NAME"); rename one. REPRO_AUDIT_BATCH=OFF compiles every
# file alone, the way to find which file a compile error belongs to when the batch's message is not enough.
option(REPRO_AUDIT_BATCH "Compile each target's files a few at a time, one translation unit per batch" ON)
# A build that is compiled whole each time it is made, not edited (the sanitizer build of `tools/dev
# test`), takes this many times the files a batch: under clang's ASan and UBSan at -O1 two core batches
# took 110.6 s of CPU apart and 90.6 s as one on the slow host.
set(REPRO_AUDIT_BATCH_SCALE 1 CACHE STRING "Multiplies every target's files per batch")

function(repro_audit_batch target files_per_batch)
  if(NOT REPRO_AUDIT_BATCH)
    return()
  endif()
  math(EXPR files_per_batch "${files_per_batch} * ${REPRO_AUDIT_BATCH_SCALE}")
  get_target_property(sources ${target} SOURCES)
  get_target_property(target_folder ${target} SOURCE_DIR)
  set(batched "")
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.cc$" OR source MATCHES "^\\$<")
      continue()
    endif()
    get_filename_component(absolute "${source}" ABSOLUTE BASE_DIR "${target_folder}")
    file(RELATIVE_PATH relative "${CMAKE_SOURCE_DIR}" "${absolute}")
    if(relative MATCHES "^\\.\\./")  # generated files: outside the source tree
      continue()
    endif()
    set(own_properties "")
    foreach(property COMPILE_DEFINITIONS COMPILE_OPTIONS INCLUDE_DIRECTORIES SKIP_PRECOMPILE_HEADERS
                     SKIP_UNITY_BUILD_INCLUSION)
      get_source_file_property(value "${absolute}" ${property})
      if(value)
        set(own_properties "${property}")
      endif()
    endforeach()
    if(own_properties)
      continue()
    endif()
    list(APPEND batched "${relative}")
  endforeach()
  list(LENGTH batched count)
  if(count LESS 2)
    return()
  endif()
  set(folder "${CMAKE_BINARY_DIR}/batches/${target}")
  set(batch_files "")
  set(index 0)
  while(index LESS count)
    math(EXPR batch "${index} / ${files_per_batch}")
    set(content "// Written by CMake (cmake/batched_sources.cmake): one translation unit for these files.\n")
    set(in_batch 0)
    while(index LESS count AND in_batch LESS files_per_batch)
      list(GET batched ${index} relative)
      string(APPEND content "#include \"${relative}\"\n")
      set_source_files_properties("${CMAKE_SOURCE_DIR}/${relative}" TARGET_DIRECTORY ${target}
                                  PROPERTIES HEADER_FILE_ONLY ON)
      math(EXPR index "${index} + 1")
      math(EXPR in_batch "${in_batch} + 1")
    endwhile()
    file(CONFIGURE OUTPUT "${folder}/batch_${batch}.cc" CONTENT "${content}")
    list(APPEND batch_files "${folder}/batch_${batch}.cc")
  endwhile()
  target_sources(${target} PRIVATE ${batch_files})
  target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}")
endfunction()
