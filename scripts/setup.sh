#!/usr/bin/env bash
# Installs what building and testing Lethe needs on a fresh Debian machine:
# a C++20 compiler, cmake, ninja, GoogleTest, liblz4 and libzstd, a JDK 17 and
# Maven, and clang 14 with libFuzzer (lethe-native/scripts/fuzz.sh). Idempotent: installs only
# what is missing. Run as root (or with sudo available).
set -euo pipefail

need=()
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v mvn >/dev/null 2>&1 || need+=(maven)
# A JDK of 17 or later (the build targets release 17; the enforcer rejects older ones).
javac_major() { javac -version 2>&1 | sed -nE 's/^javac ([0-9]+).*/\1/p'; }
if ! command -v javac >/dev/null 2>&1 || [ "$(javac_major)" -lt 17 ] 2>/dev/null || [ -z "$(javac_major)" ]; then
  need+=(openjdk-17-jdk-headless)
fi
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
# Page compression, linked statically into the engine.
[ -f /usr/include/lz4.h ] && compgen -G "/usr/lib/*/liblz4.a" >/dev/null || need+=(liblz4-dev)
[ -f /usr/include/zstd.h ] && compgen -G "/usr/lib/*/libzstd.a" >/dev/null || need+=(libzstd-dev)
command -v clang++-14 >/dev/null 2>&1 || need+=(clang-14)
# libFuzzer's runtime and the sanitizer runtimes for clang 14.
compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null || need+=(libclang-rt-14-dev)

if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
else
  echo "setup: toolchain present (g++, cmake, ninja, GoogleTest, liblz4, libzstd, JDK, Maven, clang 14 with libFuzzer)"
fi
# Print the versions (sed reads everything: `head` would close the pipe early,
# and a writer hitting the closed pipe fails the script under pipefail).
g++ --version | sed -n 1p
clang++-14 --version | sed -n 1p
cmake --version | sed -n 1p
javac -version
mvn -B -v 2>&1 | sed -n 1p
