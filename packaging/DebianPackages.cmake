# CPack settings for the four Debian packages (packaging/README.md argues
# the split). Included from packaging/CMakeLists.txt; run with
# packaging/build-debs.sh.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gantry)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Gantry maintainers <gantry@localhost>")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: each package's first description
# line is its own summary.
# /usr whatever the build's CMAKE_INSTALL_PREFIX (CPACK_INSTALL_PREFIX is the
# one that counts with CPACK_SET_DESTDIR).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
# The units and /etc/gantry are absolute destinations: stage them under
# DESTDIR instead of letting them reach the building machine's /etc.
set(CPACK_SET_DESTDIR ON)
# Relative: under the build dir, or under `cpack -B DIR`.
set(CPACK_OUTPUT_FILE_PREFIX debs)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL controller agent client slurm_compat)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies from the binaries themselves (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(gantry_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(gantry_client_dep "gantry-client (= ${gantry_deb_version})")
set(gantry_scripts ${CMAKE_CURRENT_SOURCE_DIR}/debian)

set(CPACK_DEBIAN_CONTROLLER_PACKAGE_NAME gantry-controller)
set(CPACK_DEBIAN_CONTROLLER_DESCRIPTION
    "Gantry controller (gantryd)\ngantryd keeps the cluster's jobs and nodes in RocksDB, schedules jobs\nas gangs and serves the agents and the gantry command. Runs under\nsystemd as the unprivileged gantry user.")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_DEPENDS "${gantry_client_dep}")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_RECOMMENDS "munge")
set(CPACK_DEBIAN_CONTROLLER_PACKAGE_CONTROL_EXTRA
    ${gantry_scripts}/controller/postinst ${gantry_scripts}/controller/prerm
    ${gantry_scripts}/controller/postrm)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME gantry-agent)
set(CPACK_DEBIAN_AGENT_DESCRIPTION
    "Gantry node agent (gantry-agent)\nOne per GPU node: discovers the node, registers with gantryd, and\nstarts, watches and stops the ranks of jobs as their users.")
# Ranks call `gantry progress` and `gantry checkpoint` on the node.
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "${gantry_client_dep}")
# pci.ids names GPUs that hwloc knows only by their PCI ids (agent/main.cc
# --pci-ids); without it they keep the ids and cannot be asked for by type.
set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "munge, pci.ids")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    ${gantry_scripts}/agent/postinst ${gantry_scripts}/agent/prerm
    ${gantry_scripts}/agent/postrm)

set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME gantry-client)
set(CPACK_DEBIAN_CLIENT_DESCRIPTION
    "Gantry command line (gantry) and the cluster configuration file\ngantry batch, queue, cancel, job, nodes and status, with bash completion\nand man pages, and /etc/gantry/gantry.toml, which gantryd and\ngantry-agent read.")
set(CPACK_DEBIAN_CLIENT_PACKAGE_CONTROL_EXTRA
    ${gantry_scripts}/client/conffiles)

set(CPACK_DEBIAN_SLURM_COMPAT_PACKAGE_NAME gantry-slurm-compat)
set(CPACK_DEBIAN_SLURM_COMPAT_DESCRIPTION
    "Slurm command names for Gantry\nsbatch, srun, salloc, sattach, squeue, scancel, sinfo, scontrol, sacct,\nsstat, sreport, sprio, sshare and sdiag as links to gantry, which runs the\nmatching gantry subcommand when called by these names, with their man\npages and bash completion.")
set(CPACK_DEBIAN_SLURM_COMPAT_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_SLURM_COMPAT_PACKAGE_DEPENDS "${gantry_client_dep}")
# Slurm's own client ships the same commands.
set(CPACK_DEBIAN_SLURM_COMPAT_PACKAGE_CONFLICTS "slurm-client")

include(CPack)
