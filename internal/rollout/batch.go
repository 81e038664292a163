package rollout

import (
	"context"
	"slices"
	"sync"
)

// playSlots plays units with up to slots episodes at once (continuous
// batching): each episode runs Run in a goroutine of its own, with an
// agent that hands its request to a coordinator and waits; once every
// episode still playing is waiting, the coordinator asks the agent for all
// their replies in one ActTogether. When an episode ends, the next unit in
// order takes over its slot before the next call, so calls stay full
// across tasks, harnesses and seeds. Environments execute concurrently
// (CodeRepair's python checks run side by side), and Run's logic is the
// one a lone episode follows. Who shares a call is decided only by who is
// playing, never by timing, so the units play the same way every time.
//
// ended is told of every episode that ends, in the coordinator's
// goroutine, with its unit's index; an error it returns, like an
// episode's, starts no further unit, and playSlots returns the first once
// the episodes in flight have ended. stop, checked before a unit starts,
// says to start no more (Ctrl-C).
func playSlots(ctx context.Context, e Env, agent BatchAgent, slots int, units []episodeUnit, config func(episodeUnit) Config,
	stop func() bool, ended func(i int, r Result, err error) error) error {
	agent.BeginBatch()
	type waiting struct {
		req   ActRequest
		reply chan<- actAnswer
	}
	type end struct {
		i   int
		res Result
		err error
	}
	asks := make(chan waiting)
	ends := make(chan end)
	slotOf := make([]int, len(units))
	next, playing := 0, 0
	start := func(slot int) {
		i := next
		next++
		slotOf[i] = slot
		playing++
		u := units[i]
		go func() {
			member := &batchMember{episode: slot, first: true, ask: func(r ActRequest) actAnswer {
				reply := make(chan actAnswer, 1)
				asks <- waiting{r, reply}
				return <-reply
			}}
			res, err := Run(ctx, e, member, config(u), u.task, u.seed)
			ends <- end{i, res, err}
		}()
	}
	for slot := 1; slot <= slots && next < len(units) && !stop(); slot++ {
		start(slot)
	}
	var failed error
	var queue []waiting
	for playing > 0 {
		select {
		case w := <-asks:
			queue = append(queue, w)
		case d := <-ends:
			playing--
			if err := ended(d.i, d.res, d.err); err != nil && failed == nil {
				failed = err
			}
			if failed == nil && next < len(units) && !stop() {
				start(slotOf[d.i])
			}
		}
		if playing == 0 || len(queue) < playing {
			continue
		}
		slices.SortFunc(queue, func(a, b waiting) int { return a.req.Episode - b.req.Episode })
		reqs := make([]ActRequest, len(queue))
		for j, w := range queue {
			reqs[j] = w.req
		}
		replies, err := agent.ActTogether(ctx, reqs)
		for j, w := range queue {
			if err != nil {
				w.reply <- actAnswer{err: err}
			} else {
				w.reply <- actAnswer{reply: replies[j]}
			}
		}
		queue = queue[:0]
	}
	return failed
}

type actAnswer struct {
	reply ActReply
	err   error
}

// batchMember is one episode's agent inside playSlots; episode is its
// slot.
type batchMember struct {
	episode int
	first   bool // no reply asked for yet: the episode takes over its slot
	ask     func(ActRequest) actAnswer
}

// BeginEpisode does nothing: the episode's first request says that it
// takes over its slot (ActRequest.First).
func (m *batchMember) BeginEpisode() {}

func (m *batchMember) Act(_ context.Context, r ActRequest) (ActReply, error) {
	r.Episode, r.First = m.episode, m.first
	a := m.ask(r)
	m.first = false
	return a.reply, a.err
}

// lockedGuidance makes a guidance function safe for episodes that play at
// once.
func lockedGuidance(g func(Task) (string, int)) func(Task) (string, int) {
	if g == nil {
		return nil
	}
	var mu sync.Mutex
	return func(t Task) (string, int) {
		mu.Lock()
		defer mu.Unlock()
		return g(t)
	}
}
