#!/bin/sh
# Builds libnetreduce_udp.so into $1 (Maven runs this at compile time with the module's
# classes directory + io/netreduce/wire/udp/native/<platform>). Without gcc, or off Linux,
# it builds nothing and says so: the jar then lacks the library and the Java side runs its
# Netty path (NativeUdp.describe() says which).
set -eu
out="$1"
here="$(cd "$(dirname "$0")" && pwd)"
if [ "$(uname -s)" != Linux ]; then
  echo "native/udp: not Linux, batched UDP I/O not built (the Netty path will run)"; exit 0
fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "native/udp: gcc not found, batched UDP I/O not built (the Netty path will run)"; exit 0
fi
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
mkdir -p "$out"
gcc -O2 -Wall -shared -fPIC -I"$java_home/include" -I"$java_home/include/linux" \
    -o "$out/libnetreduce_udp.so" "$here/netreduce_udp.c" "$here/crc32.c" "$here/tcp_congestion.c" "$here/lanes.c"
echo "native/udp: built $out/libnetreduce_udp.so"
