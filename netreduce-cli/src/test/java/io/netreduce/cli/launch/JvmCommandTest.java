package io.netreduce.cli.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.RankJvmOptions;
import java.lang.module.ModuleFinder;
import java.util.List;
import org.junit.jupiter.api.Test;

class JvmCommandTest {
    @Test
    void childrenGetTheVectorApiWhereTheRuntimeHasIt() {
        List<String> cmd = JvmCommand.named("rank 0").args("worker").commandLine();
        boolean runtimeHasIt = ModuleFinder.ofSystem().find(RankJvmOptions.VECTOR_MODULE).isPresent();
        assertEquals(runtimeHasIt, cmd.contains("--add-modules=" + RankJvmOptions.VECTOR_MODULE), cmd.toString());
        assertTrue(cmd.indexOf(JvmCommand.MAIN_CLASS) < cmd.indexOf("worker"), cmd.toString());
    }

    @Test
    void theJvmsNoticeAboutTheModuleIsNotPassedOn() throws Exception {
        var stderr = new java.io.ByteArrayOutputStream();
        ManagedProcess child = ManagedProcess.start(JvmCommand.named("child").args("--version"), line -> { },
                new java.io.PrintStream(stderr, true, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(0, child.awaitExit(java.time.Duration.ofSeconds(60)), child.lastErrorLine());
        assertEquals("", stderr.toString(java.nio.charset.StandardCharsets.UTF_8));
    }
}
