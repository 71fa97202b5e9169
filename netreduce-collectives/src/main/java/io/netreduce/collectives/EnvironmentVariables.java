package io.netreduce.collectives;

/**
 * The environment variables {@link CommunicatorConfig#fromEnvironment()} reads, named once
 * for the library, the {@code netreduce} command and any launcher that sets them for its
 * ranks (the user guide's "Configuration" table says what each means).
 */
public final class EnvironmentVariables {
    public static final String RANK = "NETREDUCE_RANK";
    public static final String WORLD_SIZE = "NETREDUCE_WORLD_SIZE";
    public static final String MASTER_ADDR = "NETREDUCE_MASTER_ADDR";
    public static final String MASTER_PORT = "NETREDUCE_MASTER_PORT";
    public static final String ALGORITHM = "NETREDUCE_ALGORITHM";
    public static final String FALLBACK = "NETREDUCE_FALLBACK";
    public static final String TRANSPORT = "NETREDUCE_TRANSPORT";
    public static final String LOCAL_ADDR = "NETREDUCE_LOCAL_ADDR";
    public static final String DEVICE_PORT = "NETREDUCE_DEVICE_PORT";
    public static final String SWITCH = "NETREDUCE_SWITCH";
    public static final String SWITCH_CONTROL = "NETREDUCE_SWITCH_CONTROL";
    public static final String WINDOW = "NETREDUCE_WINDOW";
    public static final String MESSAGE_BYTES = "NETREDUCE_MESSAGE_BYTES";
    public static final String RING_WINDOW = "NETREDUCE_RING_WINDOW";
    public static final String RING_MESSAGE_BYTES = "NETREDUCE_RING_MESSAGE_BYTES";
    public static final String SMALL_TENSOR_BYTES = "NETREDUCE_SMALL_TENSOR_BYTES";
    public static final String HALVING_DOUBLING_BYTES = "NETREDUCE_HALVING_DOUBLING_BYTES";
    public static final String MTU = "NETREDUCE_MTU";
    public static final String LOOPBACK_PREFIX = "NETREDUCE_LOOPBACK_PREFIX";
    public static final String ACK_TIMEOUT_MS = "NETREDUCE_ACK_TIMEOUT_MS";
    public static final String AGREEMENT = "NETREDUCE_AGREEMENT";
    public static final String TIMEOUT_SECONDS = "NETREDUCE_TIMEOUT_SECONDS";
    /** Emulated hosts on one machine ({@link CommunicatorConfig#hosts()}). */
    public static final String HOSTS = "NETREDUCE_HOSTS";
    /** "off" runs the algorithm flat even where ranks share hosts ({@link CommunicatorConfig#hierarchical()}). */
    public static final String HIERARCHICAL = "NETREDUCE_HIERARCHICAL";

    /** torchrun's, read when no {@code NETREDUCE_RANK}/{@code NETREDUCE_WORLD_SIZE} is set. */
    public static final String TORCHRUN_RANK = "RANK";
    public static final String TORCHRUN_WORLD_SIZE = "WORLD_SIZE";
    public static final String TORCHRUN_MASTER_ADDR = "MASTER_ADDR";
    public static final String TORCHRUN_MASTER_PORT = "MASTER_PORT";
    /** torchrun's count of ranks on this host. */
    public static final String TORCHRUN_LOCAL_WORLD_SIZE = "LOCAL_WORLD_SIZE";
    /** torchrun's index of this rank on its host. */
    public static final String TORCHRUN_LOCAL_RANK = "LOCAL_RANK";
    /** Open MPI's. */
    public static final String OMPI_RANK = "OMPI_COMM_WORLD_RANK";
    public static final String OMPI_WORLD_SIZE = "OMPI_COMM_WORLD_SIZE";
    public static final String OMPI_LOCAL_SIZE = "OMPI_COMM_WORLD_LOCAL_SIZE";
    public static final String OMPI_LOCAL_RANK = "OMPI_COMM_WORLD_LOCAL_RANK";
    /** Slurm's. */
    public static final String SLURM_RANK = "SLURM_PROCID";
    public static final String SLURM_WORLD_SIZE = "SLURM_NTASKS";
    public static final String SLURM_LOCAL_RANK = "SLURM_LOCALID";

    private EnvironmentVariables() {
    }
}
