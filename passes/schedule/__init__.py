"""TensorIR scheduling: ``Schedule`` (TVM's primitives on tvmlite's TIR, each printable and
recorded in a replayable trace) and the default CPU schedule that ``tvmlite.compile`` applies."""
from .default_cpu import DefaultCPUSchedule, default_schedule, is_scheduled
from .schedule import Schedule
from .state import BlockRV, LoopRV, ScheduleError
from .trace import Instruction, Trace

__all__ = ["DefaultCPUSchedule", "default_schedule", "is_scheduled", "Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "Instruction"]
