package model

// Flag is a scheduler flag of a virtual service.
type Flag string

// Scheduler flags. The kernel has three generic scheduler flag bits whose
// meaning depends on the scheduler; these names follow ipvsadm.
const (
	// MHFallback makes mh pick another real server when the chosen one
	// has weight 0 (drained) or is overloaded, instead of dropping.
	MHFallback Flag = "mh-fallback"
	// MHPort adds the source port to the mh hash, spreading one client's
	// connections over the real servers.
	MHPort Flag = "mh-port"
	// SHFallback is MHFallback for the sh scheduler.
	SHFallback Flag = "sh-fallback"
	// SHPort is MHPort for the sh scheduler.
	SHPort Flag = "sh-port"
)

// Kernel service flag bits (include/uapi/linux/ip_vs.h).
const (
	// SvcFlagSched1 is IP_VS_SVC_F_SCHED1: mh-fallback / sh-fallback.
	SvcFlagSched1 uint32 = 0x0008
	// SvcFlagSched2 is IP_VS_SVC_F_SCHED2: mh-port / sh-port.
	SvcFlagSched2 uint32 = 0x0010
)

type flagInfo struct {
	bit       uint32
	scheduler Scheduler
}

var flagTable = map[Flag]flagInfo{
	MHFallback: {SvcFlagSched1, Maglev},
	MHPort:     {SvcFlagSched2, Maglev},
	SHFallback: {SvcFlagSched1, SourceHashing},
	SHPort:     {SvcFlagSched2, SourceHashing},
}

// FlagBits returns the kernel flag bits for flags. Unknown flags add no
// bits; Validate reports them.
func FlagBits(flags []Flag) uint32 {
	var bits uint32
	for _, f := range flags {
		bits |= flagTable[f].bit
	}
	return bits
}

// FlagNames returns the names of the scheduler flag bits set in bits, for
// scheduler s (the same bit has a different name per scheduler).
func FlagNames(s Scheduler, bits uint32) []Flag {
	var out []Flag
	for _, f := range []Flag{MHFallback, MHPort, SHFallback, SHPort} {
		info := flagTable[f]
		if info.scheduler == s && bits&info.bit != 0 {
			out = append(out, f)
		}
	}
	return out
}
