# Writes the man pages of the gantry command line from its own --help, so
# they never disagree with it: gantry(1), one gantry-SUBCOMMAND(1) per
# subcommand that `gantry --help` lists, and one page per Slurm name the
# gantry-slurm-compat package installs (sbatch(1), squeue(1), ...), each
# the help that name prints. Run at build time (cmake -P) by
# packaging/CMakeLists.txt, because the list of subcommands is the binary's.
#
# Inputs (-D): GANTRY (the built binary), HELP2MAN, VERSION, OUT_DIR (gets
# man1/ with gantry's pages), SLURM_OUT_DIR (gets man1/ with the Slurm
# names' pages), SLURM_NAMES (comma-separated), STAMP (touched when done).
cmake_minimum_required(VERSION 3.25)

foreach(input GANTRY HELP2MAN VERSION OUT_DIR SLURM_OUT_DIR SLURM_NAMES STAMP)
  if(NOT DEFINED ${input})
    message(FATAL_ERROR "man_pages.cmake needs -D${input}=...")
  endif()
endforeach()

# write_page(DIR TITLE PAGE NAME_LINE COMMAND WORDS...): writes
# DIR/man1/PAGE.1.gz, titled TITLE, from `COMMAND WORDS... --help`, which
# must succeed: a page made of an error message is a broken build.
function(write_page dir title page name_line)
  execute_process(COMMAND ${ARGN} --help RESULT_VARIABLE failed
                  OUTPUT_QUIET ERROR_VARIABLE error)
  if(failed)
    message(FATAL_ERROR "${ARGN} --help failed: ${error}")
  endif()
  # help2man runs the command through the shell: "gantry batch" is fine.
  string(JOIN " " command ${ARGN})
  file(MAKE_DIRECTORY ${dir}/man1)
  set(page_file ${dir}/man1/${page}.1)
  execute_process(
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1
            --version-string=${VERSION} --name=${name_line}
            --output=${page_file} ${command}
    RESULT_VARIABLE failed ERROR_VARIABLE error)
  if(failed)
    message(FATAL_ERROR "help2man ${command}: ${error}")
  endif()
  # help2man titles a page after the program's first word; a subcommand's
  # page is titled after itself, as `man gantry-batch` finds it.
  file(READ ${page_file} text)
  string(REGEX REPLACE "\n\\.TH [^ ]+ " "\n.TH ${title} " text "${text}")
  file(WRITE ${page_file} "${text}")
  # -n: no timestamp in the gzip header, so rebuilt packages are equal.
  execute_process(COMMAND gzip -9nf ${page_file} RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${page_file} failed")
  endif()
endfunction()

file(REMOVE_RECURSE ${OUT_DIR}/man1 ${SLURM_OUT_DIR}/man1)
write_page(${OUT_DIR} GANTRY gantry
           "submit and watch jobs on a Gantry cluster" ${GANTRY})

# The subcommands are the indented words under "Subcommands:" in --help,
# each with its one-line description.
execute_process(COMMAND ${GANTRY} --help OUTPUT_VARIABLE help
                RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${GANTRY} --help failed")
endif()
string(FIND "${help}" "Subcommands:" at)
if(at LESS 0)
  message(FATAL_ERROR "${GANTRY} --help lists no subcommands")
endif()
string(SUBSTRING "${help}" ${at} -1 listing)
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^  ([a-z][a-z-]*)  +(.*)$")
    continue()
  endif()
  set(subcommand ${CMAKE_MATCH_1})
  set(summary ${CMAKE_MATCH_2})
  # "Submit a batch script (sbatch); see gantry batch --help" -> up to ";".
  string(REGEX REPLACE ";.*$" "" summary "${summary}")
  string(TOUPPER "GANTRY-${subcommand}" title)
  write_page(${OUT_DIR} ${title} gantry-${subcommand} "${summary}"
             ${GANTRY} ${subcommand})
endforeach()

# A Slurm name's help is the help of what it runs; the page is reached
# through a link with that name, as the package installs it.
set(links ${SLURM_OUT_DIR}/bin)
file(MAKE_DIRECTORY ${links})
string(REPLACE "," ";" slurm_names "${SLURM_NAMES}")
foreach(name IN LISTS slurm_names)
  file(CREATE_LINK ${GANTRY} ${links}/${name} SYMBOLIC)
  string(TOUPPER ${name} title)
  write_page(${SLURM_OUT_DIR} ${title} ${name}
             "Slurm's ${name}, answered by Gantry (see gantry(1))"
             ${links}/${name})
endforeach()

file(TOUCH ${STAMP})
