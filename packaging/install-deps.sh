#!/bin/bash
# Installs whatever packaging/debian-packages.txt lists and is missing (what
# building the daemons and CLI and running the demo need); with --test,
# packaging/debian-packages-test.txt too (what the test suite needs besides).
# Runs apt-get only when something is missing, so a ready machine costs
# nothing. Needs root (or sudo) for the install itself.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lists=("$here/debian-packages.txt")
case "${1:-}" in
  "") ;;
  --test) lists+=("$here/debian-packages-test.txt") ;;
  *) echo "usage: install-deps.sh [--test]" >&2; exit 2 ;;
esac
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "${lists[@]}")

missing=()
for package in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#wanted[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
