#!/usr/bin/env bash
# Installs what building and testing Lethe needs on a fresh Debian machine:
# a C++20 compiler, cmake, ninja, GoogleTest, a JDK 17 and Maven. Idempotent:
# installs only what is missing. Run as root (or with sudo available).
set -euo pipefail

need=()
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}"
else
  echo "setup: toolchain present (g++, cmake, ninja, GoogleTest, JDK, Maven)"
fi
# Print the versions (sed reads everything: `head` would close the pipe early,
# and a writer hitting the closed pipe fails the script under pipefail).
g++ --version | sed -n 1p
cmake --version | sed -n 1p
javac -version
mvn -v 2>&1 | sed -n 1p
