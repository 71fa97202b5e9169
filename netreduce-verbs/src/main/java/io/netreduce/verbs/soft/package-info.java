/**
 * The "soft" verbs provider: RoCEv2 Reliable Connection in user space, one UDP datagram
 * per RoCE packet (BTH first, ICRC last), over Netty's native epoll transport.
 *
 * <p>Structure follows Linux rxe (drivers/infiniband/sw/rxe): each queue pair has a requester
 * ({@link io.netreduce.verbs.soft.Requester}, which also plays rxe's completer) and a
 * responder ({@link io.netreduce.verbs.soft.Responder}); all state of every queue pair of a
 * device belongs to whoever runs the device's protocol: its single event-loop thread, or
 * where the caller polls, the thread holding the device's lock
 * ({@link io.netreduce.verbs.soft.CallerProgress}), so the datapath takes at most that one
 * lock per drive, never one per packet. docs/protocol.md describes the wire behaviour.
 */
package io.netreduce.verbs.soft;
