"""A script that never reaches its first step in time (the tracer's time limit ends it)."""
import time

time.sleep(60)
