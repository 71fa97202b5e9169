/*
 * A TCP connection's congestion control (Linux TCP_CONGESTION) for the JVM, which has no
 * socket option for it: the descriptor is read from the SocketChannel's own field through
 * JNI, which does not enforce the JDK's module encapsulation. Where the field is missing (a
 * JDK that renamed it) the calls fail with ENOTSUP and the Java side keeps the system's choice.
 */
#include <errno.h>
#include <jni.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

/* The descriptor of a sun.nio.ch.SocketChannelImpl (its int field fdVal), or -ENOTSUP. */
static int channel_fd(JNIEnv *env, jobject channel) {
    jclass cls = (*env)->GetObjectClass(env, channel);
    jfieldID field = cls == NULL ? NULL : (*env)->GetFieldID(env, cls, "fdVal", "I");
    if (field == NULL) {
        (*env)->ExceptionClear(env); /* NoSuchFieldError: say ENOTSUP instead */
        return -ENOTSUP;
    }
    return (*env)->GetIntField(env, channel, field);
}

/* Sets the connection's congestion control to name: 0, or -errno. */
JNIEXPORT jint JNICALL Java_io_netreduce_wire_tcp_TcpCongestionControl_set0(JNIEnv *env, jclass c, jobject channel,
                                                                         jstring name) {
    (void)c;
    int fd = channel_fd(env, channel);
    if (fd < 0) return fd;
    const char *n = (*env)->GetStringUTFChars(env, name, NULL);
    if (n == NULL) return -ENOMEM;
    int r = setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, n, (socklen_t)strlen(n));
    int e = errno;
    (*env)->ReleaseStringUTFChars(env, name, n);
    return r == 0 ? 0 : -e;
}

/* The connection's congestion control, or null (with errno lost: the caller says unknown). */
JNIEXPORT jstring JNICALL Java_io_netreduce_wire_tcp_TcpCongestionControl_get0(JNIEnv *env, jclass c,
                                                                            jobject channel) {
    (void)c;
    int fd = channel_fd(env, channel);
    if (fd < 0) return NULL;
    char name[64];
    socklen_t len = sizeof name - 1;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return NULL;
    name[len] = 0;
    return (*env)->NewStringUTF(env, name);
}
