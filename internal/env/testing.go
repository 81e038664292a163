package env

import "context"

// CoreOnly is an environment with its capabilities hidden: only the core
// of the contract shows, on it and on its episodes, whatever the embedded
// environment has (embedding the interface promotes its methods alone).
// Tests use it to see what a runner or a command does with an environment
// that lacks a capability.
type CoreOnly struct{ Env }

func (c CoreOnly) NewEpisode(ctx context.Context, task Task) (Episode, error) {
	ep, err := c.Env.NewEpisode(ctx, task)
	if err != nil {
		return nil, err
	}
	return coreEpisode{ep}, nil
}

// coreEpisode is an episode with nothing but the core showing.
type coreEpisode struct{ Episode }
