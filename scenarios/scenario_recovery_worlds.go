package scenarios

import (
	"fmt"
	"path/filepath"
	"time"

	"graphfed/aggregator"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/seeds"
	"graphfed/workload/rec"
)

// amlKillRecoverScenario is the kill-and-recover scenario of AML
// CE-FedGNN: three banks of a small generated world, split into bank
// directories as `graphfed split aml` writes them, exchanging boundary
// embeddings bank to bank; the kills strike in round 2.
func amlKillRecoverScenario() Scenario {
	return killScenario(killJob{name: "aml-kill-recover", rounds: 3, killRound: 2, crashTimeout: 4 * time.Second,
		world: amlKillWorld},
		"AML CE-FedGNN, durable: a bank killed after its first round-2 release rejoins without releasing twice; "+
			"a killed aggregator resumes to the uninterrupted run's model bit for bit")
}

// amlKillWorld generates the world (3 banks, 10k rows), writes its bank
// directories under dir and returns the job's parties: seeded noise and
// learners, small GIN models.
func amlKillWorld(dir string, seed uint64) (*partySpec, error) {
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, seed)
	if err != nil {
		return nil, err
	}
	cfg.Banks, cfg.Accounts, cfg.Transactions = 3, 3000, 10000
	sum, err := worldgen.Generate(cfg, dir, nil)
	if err != nil {
		return nil, err
	}
	split, err := bank.Write(bank.SplitOptions{Trans: sum.TransPath, Out: filepath.Join(dir, "banks")})
	if err != nil {
		return nil, err
	}
	var ids, dirs []string
	for _, b := range split.Banks {
		ids, dirs = append(ids, filepath.Base(b.Dir)), append(dirs, b.Dir)
	}
	if len(ids) != 3 {
		return nil, fmt.Errorf("the split wrote %d bank directories, want 3", len(ids))
	}
	learn := deploy.DefaultLearnerOptions()
	learn.AML.Hidden, learn.AML.BatchSize = 16, 256
	return &partySpec{task: deploy.TaskAML, ids: ids, finalWait: 10 * time.Second,
		round: aggregator.Config{Algo: aggregator.AlgoCEFedGNN, RoundTimeout: 30 * time.Second},
		agent: func(i int) deploy.AgentOptions {
			lo := learn
			lo.Dir, lo.Seed = dirs[i], uint64(i+1)
			return deploy.AgentOptions{Data: lo, Privacy: seededPrivacy(seed, i), LocalEpochs: 1}
		}}, nil
}

// lpsfedKillRecoverScenario is the kill-and-recover scenario of LPSFed:
// three clients of a synthetic user–item world, split by spectral
// clustering into LightGCN client directories as `graphfed split rec`
// writes them; the kills strike in round 3, the first after the two frozen
// rounds, when ρ and margins are released and personalized models go out.
// The model compared bit for bit is every client's personalized model with
// its margin.
func lpsfedKillRecoverScenario() Scenario {
	return killScenario(killJob{name: "lpsfed-kill-recover", rounds: 4, killRound: 3, crashTimeout: 4 * time.Second,
		perRound: map[privacy.Channel]int{privacy.ChannelMargin: 2}, world: lpsfedKillWorld},
		"LPSFed, durable: a client killed after its first round-3 release rejoins without releasing twice; "+
			"a killed aggregator resumes to every personalized model and margin bit for bit")
}

// lpsfedKillPhi is the job's Φ: the clients' eigenpairs and the
// aggregator's kernel length.
const lpsfedKillPhi = 16

// lpsfedKillWorld draws a 240-user world, splits it into three client
// directories under dir and returns the job's parties.
func lpsfedKillWorld(dir string, seed uint64) (*partySpec, error) {
	wc := rec.DefaultWorld()
	wc.Seed = seed
	w, err := rec.GenerateWorld(wc)
	if err != nil {
		return nil, err
	}
	clients, _, err := rec.Split(w, rec.SplitOptions{Clients: 3, EdgeVariation: 0.2, Seed: seed})
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "clients")
	if err := rec.WriteClients(root, clients); err != nil {
		return nil, err
	}
	ids := make([]string, len(clients))
	for i, c := range clients {
		ids[i] = c.ID
	}
	dirs := clientDirs(root, ids)
	learn := deploy.DefaultLearnerOptions()
	learn.Rec.Phi = lpsfedKillPhi
	learn.Rec.Model.Dim, learn.Rec.Model.BatchSize, learn.Rec.Model.LR = 16, 256, 5e-3
	return &partySpec{task: deploy.TaskRec, ids: ids, finalWait: 10 * time.Second,
		round: aggregator.Config{Algo: aggregator.AlgoLPSFed, RoundTimeout: 30 * time.Second, FreezeRounds: 2,
			LPSFed: aggregator.LPSFedConfig{Phi: lpsfedKillPhi, Seed: seed}},
		agent: func(i int) deploy.AgentOptions {
			lo := learn
			lo.Dir, lo.Seed = dirs[i], uint64(i+1)
			return deploy.AgentOptions{Data: lo, Privacy: seededPrivacy(seed, i), LocalEpochs: 1, EvalEvery: -1}
		}}, nil
}

// seededPrivacy is party i's default gate with seeded noise, so that a
// run is a function of its seeds.
func seededPrivacy(seed uint64, i int) deploy.PrivacyOptions {
	p := deploy.DefaultPrivacy()
	noise := seeds.Party(seed, i, seeds.Noise)
	p.NoiseSeed = &noise
	return p
}
