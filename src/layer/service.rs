use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use crate::engine::{CallInfo, Condenser};
use crate::tool::{ToolRequest, ToolResponse};

/// The service [`CondenseLayer`](super::CondenseLayer) makes: calls the inner tool client and
/// condenses what it returns.
#[derive(Debug, Clone)]
pub struct Condense<S> {
    inner: S,
    condenser: Condenser,
}

impl<S> Condense<S> {
    /// Wraps `inner`, condensing with `condenser`.
    pub fn new(inner: S, condenser: Condenser) -> Self {
        Condense { inner, condenser }
    }

    /// The engine.
    pub fn condenser(&self) -> &Condenser {
        &self.condenser
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Req> Service<Req> for Condense<S>
where
    S: Service<Req>,
    Req: ToolRequest,
    S::Response: ToolResponse + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, S::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // Capture what condensing needs before the inner service takes the request.
        let call = CallInfo::from_request(&request);
        let schema = request.output_schema().cloned();
        ResponseFuture::new(
            self.inner.call(request),
            self.condenser.clone(),
            call,
            schema,
        )
    }
}
