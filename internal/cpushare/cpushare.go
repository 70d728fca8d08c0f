// Package cpushare bounds the CPU time landjail spends working for a
// confined command outside the command's control group: the seccomp
// supervisor answering its brokered calls, the --protect-agent-config
// live watch handling the entries it creates. The cgroup CPU quota
// (--cpus, limits.Spec.CPUs) bounds the command; what it makes landjail
// do on its behalf would escape that bound otherwise (red team round
// 22, R22b-2 and R22c-2).
//
// The bound has the cgroup quota's rate (cpu.cfs_quota_us over
// cpu.cfs_period_us, Documentation/admin-guide/cgroup-v2.rst "cpu.max"):
// a share of CPUs, with at most one period (100 ms) of unused time kept.
// What is counted is the whole process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID, user and system, every thread) from a
// Share's first unit of work on: the wake-ups that bring each unit, the
// garbage collector's work for it, and other work of the process in
// between (the proxy's and the terminal's relays; in landjail-mcp, other
// calls') are taken at the next charge. Once the share is spent, the
// caller holds the command until it is paid back: a supervisor delays
// its next answer, the live watch freezes the command's group.
package cpushare

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Period is the period of a Share's bound, the cgroup CPU quota's
// default (cpu.cfs_period_us, 100,000 µs): a Share's unused time is
// kept for at most one Period's quota.
const Period = 100 * time.Millisecond

// MaxHold bounds one hold: the credit never falls below what MaxHold
// repays (cpus × MaxHold), and whatever one charge takes beyond that is
// forgiven. Each unit of work for the command is small (an answer, 64
// entries of the live watch, a chunk), and work longer than a Period
// charges as it goes, so the command's own work stays bounded at the
// share's rate; what a charge can take in a lump is CPU the process
// spent on something else (in landjail-mcp the file tools and the other
// calls), which held one call's command, and every call with it, for
// owed/cpus: 65 s at --cpus 0.02 after 1.3 s of grep (red team round
// 24, R24c-1).
const MaxHold = 2 * time.Second

// Share is a share of the process's CPU time: a bucket of credit that
// fills at cpus CPU-seconds a second up to one Period's quota, from
// which every charge takes the process's CPU time since the last one.
// A nil *Share bounds nothing. Its methods are safe for concurrent use:
// several workers for one run may charge one Share, and each charge
// takes what all of them (and the rest of the process) used.
type Share struct {
	cpus  float64
	quota time.Duration // cpus × Period: the most credit kept

	mu      sync.Mutex
	started bool
	credit  time.Duration // may be negative: owed
	at      time.Time     // when credit was last filled
	last    time.Duration // the process's CPU time at the last charge
}

// New returns a share of cpus CPUs (0.5: half of one), or nil when
// cpus <= 0 (no bound).
func New(cpus float64) *Share {
	if cpus <= 0 {
		return nil
	}
	return &Share{cpus: cpus, quota: time.Duration(cpus * float64(Period))}
}

// Quota is the CPU time a Period allows, 0 for a nil Share.
func (s *Share) Quota() time.Duration {
	if s == nil {
		return 0
	}
	return s.quota
}

// Do runs work, then charges (Charge). The first Do or Charge of a
// Share starts its account, with one Period's quota of credit: what the
// process used before it is not charged. A nil s runs work alone.
func (s *Share) Do(work func(), hold func(time.Duration)) {
	if s == nil {
		work()
		return
	}
	s.mu.Lock()
	s.begin()
	s.mu.Unlock()
	work()
	s.Charge(hold)
}

// begin starts the account at the first use (s.mu held).
func (s *Share) begin() {
	if !s.started {
		s.started = true
		s.credit, s.at, s.last = s.quota, time.Now(), chargeable()
	}
}

// Charge takes the process's CPU time since the last charge from the
// credit. When the credit is spent, it calls hold with the time the
// credit takes to fill back to zero (the caller holds the command that
// long, at most MaxHold: sleeps before its next answer, or freezes the
// command's group); what the process uses meanwhile is taken at the next
// charge. Work that
// takes longer than a Period calls Charge as it goes, so that the
// command is held while the work is still owed rather than after it.
// hold runs on the caller's goroutine, outside the Share's lock. A nil s
// does nothing.
func (s *Share) Charge(hold func(time.Duration)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.begin()
	now, c := time.Now(), chargeable()
	// c-s.last < 0 when work Exempt measured ended since the last
	// charge, which took part of it: given back.
	s.credit = min(s.credit+time.Duration(float64(now.Sub(s.at))*s.cpus), s.quota)
	s.credit = min(s.credit-(c-s.last), s.quota)
	s.credit = max(s.credit, -time.Duration(s.cpus*float64(MaxHold)))
	s.at, s.last = now, c
	var owed time.Duration
	if s.credit < 0 {
		owed = time.Duration(float64(-s.credit) / s.cpus)
	}
	s.mu.Unlock()
	if owed > 0 {
		hold(owed)
	}
}

// exempt is the CPU time of the work Exempt ran, in nanoseconds.
var exempt atomic.Int64

// chargeable is what a Share charges: the process's CPU time less what
// Exempt measured.
func chargeable() time.Duration { return ProcessCPU() - time.Duration(exempt.Load()) }

// Exempt runs work on a thread of its own (runtime.LockOSThread) and
// takes the thread's CPU time meanwhile (CLOCK_THREAD_CPUTIME_ID) off
// what every Share charges: for work of the process that no confined
// command causes, landjail-mcp's file tools, which the agent calls (red
// team round 24, R24c-1: 1.3 s of grep charged to a bash call held it,
// and every call, for 65 s at --cpus 0.02). What work leaves to other
// threads (the garbage collector's background marking) is still
// charged; a charge that comes while work runs takes what it used so
// far, and the next one gives it back.
func Exempt(work func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	defer func() { exempt.Add(int64(threadCPU() - start)) }()
	work()
}

// threadCPU is the calling thread's CPU time
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)), 0 if the clock fails.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// ProcessCPU is the process's CPU time (user and system, every thread;
// clock_gettime(CLOCK_PROCESS_CPUTIME_ID)), 0 if the clock fails.
func ProcessCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
