/** Rendezvous: the TCP key-value store rank 0 hosts (like torch's TCPStore). */
package io.netreduce.collectives.rendezvous;
