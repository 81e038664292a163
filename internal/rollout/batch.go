package rollout

import (
	"context"
	"slices"
	"sync"

	"github.com/feedrun/feedrun/internal/transcript"
)

// playTogether plays episodes in lockstep: each runs Run in a goroutine of
// its own, with an agent that hands its request to a coordinator and
// waits; once every episode still playing is waiting, the coordinator asks
// the agent for all their replies in one ActTogether. Environments execute
// concurrently (CodeRepair's python checks run side by side), and Run's
// logic is the one a lone episode follows. Who shares a call is decided
// only by who is still playing, never by timing, so a batch plays the same
// way every time.
func playTogether(ctx context.Context, e Env, agent BatchAgent, cfgs []Config, units []episodeUnit) ([]Result, error) {
	agent.BeginBatch()
	type waiting struct {
		req   ActRequest
		reply chan<- actAnswer
	}
	asks := make(chan waiting)
	ended := make(chan struct{})
	results := make([]Result, len(units))
	errs := make([]error, len(units))
	var wg sync.WaitGroup
	for i, u := range units {
		wg.Add(1)
		go func() {
			defer wg.Done()
			member := &batchMember{episode: i + 1, ask: func(r ActRequest) actAnswer {
				reply := make(chan actAnswer, 1)
				asks <- waiting{r, reply}
				return <-reply
			}}
			results[i], errs[i] = Run(ctx, e, member, cfgs[i], u.task, u.seed)
			ended <- struct{}{}
		}()
	}
	playing := len(units)
	var queue []waiting
	for playing > 0 {
		select {
		case w := <-asks:
			queue = append(queue, w)
		case <-ended:
			playing--
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
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

type actAnswer struct {
	reply ActReply
	err   error
}

// batchMember is one episode's agent inside playTogether.
type batchMember struct {
	episode int
	ask     func(ActRequest) actAnswer
}

// BeginEpisode does nothing: the batch began the unit for all its
// episodes.
func (m *batchMember) BeginEpisode() {}

func (m *batchMember) Act(_ context.Context, task Task, msgs []transcript.Message, banned []string, seed uint64) (string, int, error) {
	a := m.ask(ActRequest{Episode: m.episode, Task: task, Msgs: msgs, Banned: banned, Seed: seed})
	return a.reply.Reply, a.reply.Tokens, a.err
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
