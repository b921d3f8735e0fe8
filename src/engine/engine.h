// The engine's rooms together. Every room keeps a reference to this and reads the shared
// state (EngineState) and the other rooms through it, the way Volcano's actions and plugins
// reach everything through the scheduling Session:
//   flavors    admission/flavor_assigner.h  flavor combinations, quota arithmetic, node pools
//   statement  statement.h                  placements through an undo log; evict / reinstate
//   topology   placement/topology.h         pod sets inside topology domains
//   placer     placement/placer.h           node eligibility, placement plugins, gangs whole
//   pending    pending_queues.h             queues in order, parking and wake-up
//   admission  admission/admission.h        one attempt for one workload
//   preemptor  preemption/preemptor.h       candidates, victim search, minimal victim sets
//   estimator  time/estimator.h             runtime estimates: given, or learned from runs
//   reservations time/reservations.h        reservations for heads that wait; backfill
//   waits      time/wait_limits.h           wait limits: overdue workloads go ahead
//   fair_usage time/fair_usage.h            LocalQueues ordered by decayed usage (Kueue's AFS)
//   terminations preemption/termination.h   victims that keep their pods for a grace period
//   stale_gangs stale_gangs.h               gangs restored below their minimum: complete or evict
// The cycle's actions (actions/) and the Scheduler face (scheduler.cc) drive them.
//
// Thread-safety: none; owned by one Scheduler.
#pragma once

#include "engine/admission/admission.h"
#include "engine/admission/flavor_assigner.h"
#include "engine/engine_state.h"
#include "engine/pending_queues.h"
#include "engine/placement/placer.h"
#include "engine/placement/topology.h"
#include "engine/preemption/preemptor.h"
#include "engine/preemption/termination.h"
#include "engine/stale_gangs.h"
#include "engine/statement.h"
#include "engine/time/estimator.h"
#include "engine/time/fair_usage.h"
#include "engine/time/reservations.h"
#include "engine/time/wait_limits.h"

namespace tessera {

struct Engine {
  explicit Engine(Model m)
      : flavors(st),
        statement(*this),
        topology(*this),
        placer(*this),
        pending(*this),
        admission(*this),
        preemptor(*this),
        estimator(m.config.estimates),
        reservations(*this),
        waits(*this),
        fair_usage(*this),
        terminations(*this),
        stale_gangs(*this) {
    st.model = std::move(m);
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  EngineState st;
  FlavorAssigner flavors;
  Statement statement;
  TopologyPlacer topology;
  Placer placer;
  PendingQueues pending;
  Admission admission;
  Preemptor preemptor;
  RuntimeEstimator estimator;
  Reservations reservations;
  WaitLimits waits;
  FairUsage fair_usage;
  Terminations terminations;
  StaleGangs stale_gangs;
};

}  // namespace tessera
