/**
 * The "soft" verbs provider: RoCEv2 Reliable Connection in user space, one UDP datagram
 * per RoCE packet (BTH first, ICRC last), over Netty's native epoll transport.
 *
 * <p>Structure follows Linux rxe (drivers/infiniband/sw/rxe): each queue pair has a requester
 * ({@link io.netreduce.verbs.soft.Requester}, which also plays rxe's completer) and a
 * responder ({@link io.netreduce.verbs.soft.Responder}); all state of every queue pair of a
 * device is confined to the device's single event-loop thread, so the datapath takes no
 * locks. docs/protocol.md describes the wire behaviour.
 */
package io.netreduce.verbs.soft;
