package io.netreduce.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SoftPropertiesTest {
    /**
     * The provider refuses every key outside {@link SoftProperties#ALL} when a device opens,
     * so a key added to the class but not to the set would be refused as unknown.
     */
    @Test
    void allNamesEveryKeyTheClassDefines() throws IllegalAccessException {
        Set<String> keys = new HashSet<>();
        for (Field f : SoftProperties.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                keys.add((String) f.get(null));
            }
        }
        assertEquals(keys, SoftProperties.ALL);
        assertEquals(SoftProperties.ALL, new SoftProvider().deviceProperties());
    }
}
