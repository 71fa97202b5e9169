package io.netreduce.cli;

import io.netreduce.cli.probe.ProbeCommand;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;

/**
 * The {@code netreduce} command. Each subcommand lives in its own class; this one wires
 * them together and owns what they share: {@code --verbose}, {@code --version}, and the
 * rule that failures print one line to stderr and exit non-zero (stack traces only with
 * {@code --verbose}).
 */
@Command(name = "netreduce",
        mixinStandardHelpOptions = true,
        versionProvider = CliVersion.class,
        description = {
            "All-reduce over RDMA with NetReduce-style in-network aggregation.",
            "Everything runs on this machine over loopback unless told otherwise."
        },
        subcommands = {
            DemoCommand.class,
            BenchCommand.class,
            ProbeCommand.class,
            SwitchCommand.class,
            SimulateCommand.class,
            WorkerCommand.class,
            CommandLine.HelpCommand.class
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce demo                   switch + 4 workers: all-reduce, verified, timed",
            "  netreduce bench --local 4 -b 1M -e 64M -f 2",
            "  netreduce probe bw --local --size 65536",
            "  netreduce switch --data 127.0.0.100:4791 --control 127.0.0.1:7100",
            "  netreduce simulate --gpus 64",
            "",
            "Exit codes: 0 ok, 1 failed, 2 bad command line, 3 wrong all-reduce results,",
            "130 stopped by Ctrl-C."
        })
public final class NetreduceCli implements Runnable {

    /** Declared once here and inherited by every subcommand. */
    @Option(names = "--verbose", scope = ScopeType.INHERIT,
            description = "Debug logging on stderr, and stack traces with errors.")
    boolean verbose;

    @picocli.CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        // `netreduce` alone: show what there is.
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        int code = run(args);
        System.exit(code);
    }

    /** Runs the command line and returns the exit code (used by main and in-process tests). */
    public static int run(String... args) {
        CommandLine cli = commandLine();
        return cli.execute(args);
    }

    /** The configured command line: one-line errors, --verbose handled before execution. */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new NetreduceCli());
        cli.setUsageHelpWidth(100);
        cli.setExecutionStrategy(NetreduceCli::executeWithLogging);
        cli.setParameterExceptionHandler(NetreduceCli::onBadCommandLine);
        cli.setExecutionExceptionHandler(NetreduceCli::onFailure);
        return cli;
    }

    private static int executeWithLogging(ParseResult parseResult) {
        for (ParseResult pr = parseResult; pr != null; pr = pr.subcommand()) {
            if (pr.hasMatchedOption("--verbose")) {
                CliLogging.setVerbose(true);
            }
        }
        return new CommandLine.RunLast().execute(parseResult);
    }

    private static int onBadCommandLine(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
                + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
        err.flush();
        return ExitCode.USAGE;
    }

    private static int onFailure(Exception e, CommandLine cmd, ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        err.println(cmd.getCommandSpec().qualifiedName() + ": " + Failures.describe(e)
                + (CliLogging.verbose() ? "" : " (--verbose shows details)"));
        if (CliLogging.verbose()) {
            e.printStackTrace(err);
        }
        err.flush();
        return Failures.exitCode(e);
    }
}
