/** Building blocks shared by the providers (the completion ring by soft and tcp, registration checks by all). */
package io.netreduce.verbs.support;
