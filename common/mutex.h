// The mutex, its scoped lock and its condition variable that every thread
// in Gantry shares state through. They are std::mutex and
// std::condition_variable underneath (pthreads: ThreadSanitizer sees every
// lock), with the capability annotations clang's -Wthread-safety reads, so
// that a member declared ABSL_GUARDED_BY(mutex_) cannot be touched without
// holding mutex_ (tests/style/check_thread_safety.py compiles every source
// that shares state this way with the warning as an error).
//
// Use:
//   Mutex mutex_;
//   std::deque<Task> queue_ ABSL_GUARDED_BY(mutex_);
//   void Drain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);   // caller holds it
//
//   MutexLock lock(mutex_);
//   ready_.Wait(lock, [this] {
//     mutex_.AssertHeld();  // the analysis sees a lambda as holding nothing
//     return !queue_.empty() || stopping_;
//   });
//
// absl::Mutex carries the same annotations, but Debian's abseil is not
// built with ThreadSanitizer, so the TSan tier could not see its locking.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "absl/base/thread_annotations.h"

namespace gantry {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mutex_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mutex_.unlock(); }

  // Tells the analysis that the caller holds this mutex where it cannot
  // see it: in a callback that is only ever run under the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds a Mutex from construction to the end of the scope, or until
// Unlock(); Lock() takes it again. A CondVar waits on it.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ABSL_EXCLUSIVE_LOCK_FUNCTION(mutex)
      : lock_(mutex.mutex_) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ABSL_UNLOCK_FUNCTION() { lock_.unlock(); }
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { lock_.lock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// Waits release the lock while they wait and hold it again when they
// return. Those with a predicate return when it holds (or, with a
// deadline, false when the deadline passed first), as the std ones do;
// the predicate runs under the lock.
class CondVar {
 public:
  void Wait(MutexLock& lock) { ready_.wait(lock.lock_); }
  template <typename Predicate>
  void Wait(MutexLock& lock, Predicate done) {
    ready_.wait(lock.lock_, std::move(done));
  }

  // std::cv_status::timeout when the deadline passed.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(
      MutexLock& lock, const std::chrono::time_point<Clock, Duration>& when) {
    return ready_.wait_until(lock.lock_, when);
  }
  template <typename Clock, typename Duration, typename Predicate>
  bool WaitUntil(MutexLock& lock,
                 const std::chrono::time_point<Clock, Duration>& when,
                 Predicate done) {
    return ready_.wait_until(lock.lock_, when, std::move(done));
  }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(MutexLock& lock,
                         const std::chrono::duration<Rep, Period>& wait) {
    return ready_.wait_for(lock.lock_, wait);
  }
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& wait,
               Predicate done) {
    return ready_.wait_for(lock.lock_, wait, std::move(done));
  }

  void NotifyOne() noexcept { ready_.notify_one(); }
  void NotifyAll() noexcept { ready_.notify_all(); }

 private:
  std::condition_variable ready_;
};

}  // namespace gantry
