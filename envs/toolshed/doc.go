// Package toolshed is the study's simulated office: files, contacts, a
// calendar and a mailbox behind twelve typed tools that an agent calls with
// one Python-style call per reply.
//
// It exists so that every failure the probe scores is a real one. A failed
// call is parsed, type-checked and executed against an episode's own copy of
// the office, and the observation the model sees is the error the environment
// actually raised, worded like a Python traceback's last line. Beside each
// error sits its structured form, from which Describe writes the abstract
// harness's runtime description without quoting the failed call.
//
// Tasks are templates instantiated with entities from seeded offices; each
// carries the correct calls that solve it and a success predicate that the
// environment checks itself, so a run never succeeds because the model said
// it was done. MakeItems turns those correct calls into failing calls of every
// applicable failure kind, executed where the correct call would have run.
//
// How many tasks each template yields is a setting (Environment's
// TasksPerTemplate); the first FirstTasks of each of the first templates are
// the tasks every earlier run played and the probe's items are made from,
// and they stay the same whatever the setting.
package toolshed
