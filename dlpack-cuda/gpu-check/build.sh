#!/usr/bin/env bash
# Builds the GPU check bundle: a jlink runtime with only the JDK modules the CUDA suite needs, the
# project's jars and test classes, the JUnit console launcher, the C test peer and the C
# bandwidth baseline, all prebuilt, so that run.sh works on a Linux x86-64 GPU machine without
# Maven, a compiler or a network.
#
#   bash dlpack-cuda/gpu-check/build.sh            -> target/gpu-check/ and target/gpu-check.tar.gz
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/target/gpu-check"
jdk="${JDLPACK_JDK:-$(ls -d /usr/lib/jvm/*25* /usr/lib/jvm/*2[2-9]* 2>/dev/null | head -1)}"
junit_console=org.junit.platform:junit-platform-console-standalone:1.11.4

cd "$root"
rm -rf "$out" && mkdir -p "$out/lib" "$out/native"
# One reactor build, no install: the local repository may be shared, and the reactor resolves the
# project's own modules from their target directories.
mvn -B -q -DskipTests package dependency:copy-dependencies -pl dlpack-cuda -am -DincludeScope=test \
  -DexcludeGroupIds=org.jdlpack,org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian,net.bytebuddy,net.jqwik \
  -DoutputDirectory="$out/lib"
cp dlpack-abi/target/dlpack-abi-*-SNAPSHOT.jar test-support/target/dlpack-test-support-*-SNAPSHOT.jar \
   dlpack-cpu/target/dlpack-cpu-*-SNAPSHOT.jar dlpack-python/target/dlpack-python-*-SNAPSHOT.jar \
   dlpack-cuda/target/dlpack-cuda-*-SNAPSHOT.jar dlpack-cuda/target/dlpack-cuda-*-tests.jar "$out/lib/"
mvn -B -q dependency:copy -Dartifact=$junit_console -DoutputDirectory="$out/lib"

# The C peer and the bandwidth baseline, built here: x86-64 Linux, glibc.
src=test-support/src/main/c
gcc -std=c11 -O2 -Wall -Wextra -Werror -pthread -shared -fPIC -o "$out/native/libdlpackpeer.so" "$src/peer.c"
gcc -std=c11 -O2 -Wall -Wextra -o "$out/native/cuda_bandwidth" dlpack-cuda/gpu-check/cuda_bandwidth.c -ldl

modules=$("$jdk/bin/jdeps" --multi-release 25 --ignore-missing-deps --print-module-deps "$out"/lib/*.jar 2>/dev/null | tail -1)
"$jdk/bin/jlink" --add-modules "$modules,java.logging,jdk.zipfs" --strip-java-debug-attributes --strip-native-debug-symbols=exclude-debuginfo-files --no-man-pages --no-header-files \
  --compress zip-9 --output "$out/runtime"
cp dlpack-cuda/gpu-check/run.sh "$out/run.sh"
chmod +x "$out/run.sh"
tar -C "$root/target" -czf "$root/target/gpu-check.tar.gz" gpu-check
echo "modules: $modules"
du -sh "$out" "$root/target/gpu-check.tar.gz"
