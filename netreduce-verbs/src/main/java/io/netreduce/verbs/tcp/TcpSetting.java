package io.netreduce.verbs.tcp;

import io.netreduce.verbs.DeviceOptions;

/**
 * One setting of the tcp provider, looked up as all of them are: the device option, else
 * the system property of the same name, else an environment variable. Error messages name
 * where a refused value came from.
 */
record TcpSetting(String option, String environment) {
    /** The process-wide value (system property, then environment), or null. */
    String processWide() {
        String property = System.getProperty(option);
        if (isSet(property)) {
            return property.trim();
        }
        String env = System.getenv(environment);
        return isSet(env) ? env.trim() : null;
    }

    /** The value for a device with these options, or null if nothing sets it. */
    String value(DeviceOptions options) {
        String own = options.properties().get(option);
        return isSet(own) ? own.trim() : processWide();
    }

    /** Where {@link #value} found its value, for messages that refuse it. */
    String source(DeviceOptions options) {
        return isSet(options.properties().get(option)) ? "device option '" + option + "'"
                : isSet(System.getProperty(option)) ? "system property " + option
                : "environment variable " + environment;
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }
}
