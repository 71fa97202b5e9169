/** Building blocks shared by the software providers (soft, tcp). */
package io.netreduce.verbs.support;
