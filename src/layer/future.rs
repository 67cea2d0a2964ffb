use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use serde_json::Value;

use crate::engine::{CallInfo, Condenser};
use crate::llm::BoxFuture;
use crate::tool::ToolResponse;

pin_project! {
    /// The response future of [`Condense`](super::Condense): first the inner call, then (on
    /// success) condensing its result.
    pub struct ResponseFuture<F, R> {
        #[pin]
        state: State<F, R>,
        condenser: Condenser,
        call: Option<(CallInfo, Option<Value>)>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, R> {
        Calling { #[pin] inner: F },
        Condensing { condensing: BoxFuture<'static, R> },
    }
}

impl<F, R> std::fmt::Debug for ResponseFuture<F, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Calling { .. } => "calling",
            State::Condensing { .. } => "condensing",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}

impl<F, R> ResponseFuture<F, R> {
    /// `output_schema` is the tool's, for its structured-content policy.
    pub(crate) fn new(
        inner: F,
        condenser: Condenser,
        call: CallInfo,
        output_schema: Option<Value>,
    ) -> Self {
        ResponseFuture {
            state: State::Calling { inner },
            condenser,
            call: Some((call, output_schema)),
        }
    }
}

impl<F, R, E> Future for ResponseFuture<F, R>
where
    F: Future<Output = Result<R, E>>,
    R: ToolResponse + Send + 'static,
{
    type Output = Result<R, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Calling { inner } => {
                    // A tool error is the caller's business: pass it through untouched.
                    let response = ready!(inner.poll(cx))?;
                    let condenser = this.condenser.clone();
                    let (call, schema) = this.call.take().unwrap_or_default();
                    let condensing: BoxFuture<'static, R> = Box::pin(async move {
                        condenser
                            .condense_response_with_outcomes(&call, schema.as_ref(), response)
                            .await
                            .0
                    });
                    this.state.set(State::Condensing { condensing });
                }
                StateProj::Condensing { condensing } => {
                    return Poll::Ready(Ok(ready!(condensing.as_mut().poll(cx))));
                }
            }
        }
    }
}
